# Tessera's two entry points for a fresh Debian machine:
#   make run   installs what is missing, builds, and runs the main job on a generated sample image
#   make test  installs what is missing, builds, and runs every test (what .ci/run calls)

TESSERA := .build/release/tessera
SAMPLE := sample/sample.jpg
# The project's own Python (scripts/install-deps makes it): tests, the sample and benchmarks all run with it.
PYTHON := .venv/bin/python

.PHONY: deps build test unit-tests peer-tests browser-tests fuzz-build fuzz fuzz-regressions fuzz-smoke run bench clean

deps:
	@scripts/install-deps

# The CLI is linked statically against the Swift runtime: it starts in a third of the time at half the memory.
build: deps
	swift build -c release --static-swift-stdlib --product tessera

unit-tests: deps
	swift test

peer-tests: build
	TESSERA=$(TESSERA) $(PYTHON) -m pytest -q Tests/peers

# The web viewer in headless Chromium (Debian's chromium and chromium-driver) against the release server.
browser-tests: build
	TESSERA=$(TESSERA) $(PYTHON) -m pytest -q Tests/browser

test: unit-tests fuzz-regressions peer-tests browser-tests fuzz-smoke

# Fuzzing (RELIABILITY.md): tessera-fuzz built with libFuzzer's driver and AddressSanitizer in a build folder of its
# own; `make fuzz FUZZ_SECONDS=3600 FUZZ_JOBS=9` runs every target that long at once, make test a short pass of each.
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_RUNTIME = $(dir $(realpath $(shell command -v swift)))../lib/swift/clang/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a

fuzz-build: deps
	swift build -c release --build-path .build/fuzz --product tessera-fuzz -Xswiftc -DFUZZING \
	  -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
	  -Xlinker $(FUZZ_RUNTIME) -Xlinker -lstdc++

fuzz: fuzz-build
	FUZZ_JOBS=$(FUZZ_JOBS) scripts/fuzz $(FUZZ_SECONDS)

fuzz-smoke: fuzz-build
	FUZZ_RUNS=4000 FUZZ_JOBS=2 scripts/fuzz 120

# Every saved input (the seeds, and each finding once fixed) through its target in an ordinary build.
fuzz-regressions: deps
	swift build --product tessera-fuzz
	for target in $$(.build/debug/tessera-fuzz --list | awk '{print $$1}'); do \
	  .build/debug/tessera-fuzz $$target Tests/Fuzz/corpus/$$target \
	    $$(test -d Tests/Fuzz/regressions/$$target && echo Tests/Fuzz/regressions/$$target) || exit 1; \
	done

$(SAMPLE): | build
	$(PYTHON) Benchmarks/make_sample.py $(SAMPLE) --megapixels 100

run: build $(SAMPLE)
	$(TESSERA) info $(SAMPLE)
	$(TESSERA) region $(SAMPLE) sample/middle.png --rect 4500,4500,1024,1024 --stats
	$(TESSERA) convert $(SAMPLE) sample/overview.jpg --scale 1/8 --stats
	$(TESSERA) thumbnail $(SAMPLE) -s 256 -o thumbnail.jpg --stats
	$(TESSERA) tile $(SAMPLE) sample/pyramid --stats
	@echo "wrote sample/middle.png (a 1024x1024 region), sample/overview.jpg (the whole image at 1/8),"
	@echo "sample/thumbnail.jpg and sample/pyramid.dzi with sample/pyramid_files/ (a Deep Zoom pyramid)"
	@echo "now serving sample/: view the sample at http://127.0.0.1:8000/view/sample, its Deep Zoom pyramid at"
	@echo "http://127.0.0.1:8000/view/pyramid, everything at http://127.0.0.1:8000/ (Ctrl-C stops)"
	$(TESSERA) serve sample --port 8000

# The side-by-side benchmarks (BENCHMARKS.md), with their extra modules: make bench ARGS='--only region --runs 5'
bench: build
	@scripts/install-deps --bench
	$(PYTHON) Benchmarks/run $(ARGS)

clean:
	rm -rf .build sample
