import Foundation
import Testing
@testable import tessera

/// A batch's inputs: shards, the output template, the list, and the reports merged by `--summarize`.
@Suite struct BatchTests {
    @Test func shardsCoverTheListExactlyOnceAndAlwaysTheSame() throws {
        let items = Array(0..<23)
        for count in 1...7 {
            let shards = (0..<count).map { Shard(parsing: "\($0)/\(count)")! }
            let covered = shards.flatMap { $0.select(items) }
            #expect(covered.sorted() == items, "\(count) shards")
            #expect(shards.map { $0.select(items) } == shards.map { $0.select(items) })
        }
        #expect(Shard(parsing: "1/4")!.select(items) == [1, 5, 9, 13, 17, 21])
        #expect(Shard(parsing: "3/4")!.select([1, 2]) == [])
        for refused in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3", "/4"] {
            #expect(Shard(parsing: refused) == nil, "\(refused)")
        }
    }

    @Test func theTemplateNamesEachInputBesideItUnlessAbsolute() {
        let relative = OutputTemplate(pattern: "pyramids/%s")
        #expect(relative.namesEachInput)
        #expect(relative.path(for: "scans/a/page.tif") == "scans/a/pyramids/page")
        #expect(relative.path(for: "page.png") == "pyramids/page")
        #expect(OutputTemplate(pattern: "/out/%s.zip").path(for: "x/y.jpg") == "/out/y.zip")
        #expect(!OutputTemplate(pattern: "/out/one").namesEachInput)
    }

    @Test func aListReadsOnePathALineAndRefusesTwoInputsForOneOutput() throws {
        let folder = NSTemporaryDirectory() + "tessera-batch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let list = "\(folder)/list.txt"
        try Data("a.png\r\n\nsub/b.jpg\nwith space.tif\n".utf8).write(to: URL(fileURLWithPath: list))
        let inputs = try BatchInputs(arguments: ["first.png"], list: list, template: OutputTemplate(pattern: "/o/%s"))
        #expect(inputs.items.map(\.input) == ["first.png", "a.png", "sub/b.jpg", "with space.tif"])
        #expect(inputs.items.map(\.output) == ["/o/first", "/o/a", "/o/b", "/o/with space"])
        #expect(throws: UsageError.self) {
            try BatchInputs(arguments: ["x/a.png", "y/a.jpg"], list: nil, template: OutputTemplate(pattern: "/o/%s"))
        }
        #expect(throws: UsageError.self) {
            try BatchInputs(arguments: ["a.png", "b.png"], list: nil, template: OutputTemplate(pattern: "/o/one"))
        }
        #expect(BatchInputs.isURL("https://example.org/a.jpg"))
        #expect(BatchInputs.isURL("s3://bucket/a.tif"))
        #expect(!BatchInputs.isURL("scans/a.tif"))
        #expect(!BatchInputs.isURL("odd name ://x.png"))
        #expect(OutputTemplate(pattern: "out/%s").path(for: "https://example.org/maps/a.tif?v=2") == "out/a")
        #expect(OutputTemplate(pattern: "/o/%s.dzi").path(for: "http://example.org/a.jpg") == "/o/a.dzi")
    }

    @Test func summariesCountTheLastRecordOfEachInput() throws {
        let folder = NSTemporaryDirectory() + "tessera-batch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func record(_ input: String, _ status: BatchRecord.Status) -> BatchRecord {
            BatchRecord(input: input, output: "o/\(input)", status: status, seconds: 1.5, peakMemory: input.count,
                        tiles: status == .failed ? nil : 10, bytes: status == .failed ? nil : 100,
                        error: status == .failed ? "\(input): corrupt" : nil)
        }
        let first = [record("a", .built), record("b", .failed), record("c", .failed)]
        let rerun = [record("b", .built), record("c", .failed)]
        for (name, records) in [("first", first), ("rerun", rerun)] {
            try Data(records.map { $0.jsonLine + "\n" }.joined().utf8)
                .write(to: URL(fileURLWithPath: "\(folder)/\(name).jsonl"))
        }
        let merged = try BatchSummary.merge(["\(folder)/first.jsonl", "\(folder)/rerun.jsonl"])
        #expect(merged == [record("a", .built), record("b", .built), record("c", .failed)])
        let totals = BatchSummary.Totals(merged)
        #expect(totals.inputs == 3 && totals.built == 2 && totals.failed == 1)
        #expect(totals.tiles == 20 && totals.bytes == 200 && totals.seconds == 4.5)
        #expect(totals.failures == [.init(input: "c", error: "c: corrupt")])
        try Data("{not json\n".utf8).write(to: URL(fileURLWithPath: "\(folder)/bad.jsonl"))
        #expect(throws: (any Error).self) { try BatchSummary.merge(["\(folder)/bad.jsonl"]) }
    }
}
