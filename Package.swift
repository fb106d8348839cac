// swift-tools-version:6.0
// Tessera: gigapixel images in Swift. See README.md, and docs/ARCHITECTURE.md for the shape of the package.
import PackageDescription

// The resampler's loops built for CPUs with AVX2 as well as for the baseline, on x86-64 hosts (`haswell` is the
// first such CPU swiftc names); elsewhere the module is built as it is and never called.
#if arch(x86_64)
let avx2Flags: [SwiftSetting] = [.unsafeFlags(["-target-cpu", "haswell"])]
#else
let avx2Flags: [SwiftSetting] = []
#endif

let package = Package(
    name: "Tessera",
    products: [
        .library(name: "Tessera", targets: ["Tessera"]),
        .library(name: "TesseraTiling", targets: ["TesseraTiling"]),
        .library(name: "TesseraServer", targets: ["TesseraServer"]),
        .executable(name: "tessera", targets: ["tessera"]),
    ],
    targets: [
        // System libraries from Debian's -dev packages. CTIFF, CWebP, COpenJPEG, CSDL2, CCurl and CMicroHTTPD are
        // headers only: their shims open the libraries on the first call, so only TIFF, WebP and JPEG 2000 work
        // loads those codecs, only `tessera view` loads SDL2, only remote inputs load libcurl and only `tessera
        // serve` loads libmicrohttpd.
        .systemLibrary(name: "CJPEG", path: "Sources/CJPEG"),
        .systemLibrary(name: "CPNG", path: "Sources/CPNG"),
        .systemLibrary(name: "CTIFF", path: "Sources/CTIFF"),
        .systemLibrary(name: "CWebP", path: "Sources/CWebP"),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .systemLibrary(name: "COpenJPEG", path: "Sources/COpenJPEG"),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD"),
        .systemLibrary(name: "CSDL2", path: "Sources/CSDL2"),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl"),
        // The few C shims the libraries need: setjmp/longjmp error recovery for libjpeg and libpng,
        // per-handle error capture for libtiff, libxml2's tree walked for Swift; libtiff, libwebp, OpenJPEG and
        // libxml2 opened on first use. `libxml2` is a link to /usr/include/libxml2, whose headers only the shim
        // sees (a pkg-config include path would come with libxml2's link flag).
        .target(
            name: "CCodecShims",
            dependencies: ["CJPEG", "CPNG", "CTIFF", "CWebP", "COpenJPEG", "CLibraryLoader"],
            cSettings: [.headerSearchPath("libxml2")],
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png16")]
        ),
        // A library opened with dlopen on the first call of one of its functions.
        .target(name: "CLibraryLoader"),
        // libcurl opened on first use, and curl_easy_setopt's varargs, which Swift cannot pass.
        .target(name: "CCurlShims", dependencies: ["CCurl", "CLibraryLoader"]),
        // libSDL2 opened on first use.
        .target(name: "CSDL2Shims", dependencies: ["CSDL2", "CLibraryLoader"]),

        // OpenJPH's C++ HTJ2K encoder behind a C interface.
        .target(name: "CHTJ2KShim", linkerSettings: [.linkedLibrary("openjph"), .linkedLibrary("stdc++")]),
        // Which instruction sets the CPU has, for code built for more than the baseline.
        .target(name: "CCPUFeatures"),
        // The plane resampler's inner loops, inlinable; and the same loops compiled for AVX2, chosen at run time.
        .target(name: "ResamplingLoops"),
        .target(name: "ResamplingLoopsAVX2", dependencies: ["ResamplingLoops"], swiftSettings: avx2Flags),
        // The CATiledLayer-style engine: pure Swift, no C, no Foundation.
        .target(name: "TesseraTiling"),
        // Image I/O and processing over the C codecs.
        .target(
            name: "Tessera",
            dependencies: ["CJPEG", "CPNG", "CTIFF", "CWebP", "CZlib", "COpenJPEG", "CCodecShims", "CHTJ2KShim",
                           "CCurl", "CCurlShims", "TesseraTiling", "CCPUFeatures", "ResamplingLoops",
                           "ResamplingLoopsAVX2"]
        ),
        // libmicrohttpd, opened on first use, and its varargs start and info functions, which Swift cannot call.
        .target(name: "CServerShims", dependencies: ["CMicroHTTPD", "CLibraryLoader"]),
        // The IIIF Image API server over libmicrohttpd.
        .target(name: "TesseraServer", dependencies: ["Tessera", "TesseraTiling", "CMicroHTTPD", "CServerShims"]),
        // The native viewer: an SDL2 window drawing TesseraTiling's tiles, one texture per tile.
        .target(name: "TesseraViewer", dependencies: ["TesseraTiling", "Tessera", "CSDL2", "CSDL2Shims"]),
        .executableTarget(name: "tessera", dependencies: ["Tessera", "TesseraTiling", "TesseraServer", "TesseraViewer"]),
        // Replays a scripted pan-and-zoom trace through the tiling engine over a real Deep Zoom pyramid.
        .executableTarget(
            name: "TilingSimulation", dependencies: ["TesseraTiling", "Tessera"], path: "Benchmarks/TilingSimulation",
            exclude: ["README.md"]
        ),
        // Tessera's parsers as fuzz targets: under libFuzzer when built with -DFUZZING (make fuzz), else replaying
        // saved inputs (the regression inputs in Tests/Fuzz, run by make test).
        .executableTarget(name: "tessera-fuzz", dependencies: ["Tessera", "TesseraServer", "TesseraViewer", "CZlib"],
                          path: "Sources/TesseraFuzz"),
        // Feeds a file to IncrementalImageSource in chunks, or decodes it one-shot, for Benchmarks/incremental.py.
        .executableTarget(name: "IncrementalFeed", dependencies: ["Tessera"], path: "Benchmarks/IncrementalFeed"),
        // Entropy-decodes a whole sequential JPEG with libjpeg-turbo or Tessera's decoder, for Benchmarks/entropy.py.
        .executableTarget(name: "EntropyDecode", dependencies: ["Tessera", "CCodecShims"], path: "Benchmarks/EntropyDecode"),

        .testTarget(name: "TesseraTests", dependencies: ["Tessera"]),
        .testTarget(name: "TesseraTilingTests", dependencies: ["TesseraTiling"]),
        .testTarget(name: "TesseraServerTests", dependencies: ["TesseraServer"]),
        .testTarget(name: "TesseraViewerTests", dependencies: ["TesseraViewer"]),
        // The command line's option declarations, parser and help, tested inside the executable.
        .testTarget(name: "TesseraCLITests", dependencies: ["tessera"]),
    ],
    swiftLanguageModes: [.v6]
)
