import Foundation
import Testing
@testable import Tessera

/// The completion marker a batch skips by, and the partial-build policies a batch resumes by.
@Suite struct CompletionRecordTests {
    private func file(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func aBuildKeyFollowsTheSourcesSizeTimeAndOptions() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let source = "\(folder)/in.png"
        try file(source, "one")
        let key = BuildKey(source: source, options: ["layout=dz"])
        #expect(BuildKey(source: source, options: ["layout=dz"]) == key)
        #expect(BuildKey(source: source, options: ["layout=iiif"]) != key)
        try file(source, "longer")
        #expect(BuildKey(source: source, options: ["layout=dz"]) != key, "another size")
        try file(source, "other!")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)],
                                              ofItemAtPath: source)
        let touched = BuildKey(source: source, options: ["layout=dz"])
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 2_000_000)],
                                              ofItemAtPath: source)
        #expect(BuildKey(source: source, options: ["layout=dz"]) != touched, "another modification time")
    }

    @Test func aFileOutputIsCompleteOnlyForTheKeyItsRecordHolds() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try file("\(folder)/in.png", "pixels")
        let key = BuildKey(source: "\(folder)/in.png", options: ["layout=tiff"])
        let record = CompletionRecord.file("\(folder)/p.tif")
        #expect(record.path == "\(folder)/.p.tif.tessera-complete")
        try file("\(folder)/p.tif", "12345678")
        #expect(!record.isComplete(for: key), "no record yet")
        try record.didBuild(key)
        #expect(record.isComplete(for: key))
        #expect(!record.isComplete(for: BuildKey(source: "\(folder)/in.png", options: ["layout=tiff", "format=png"])))
        #expect(record.outputBytes() == 8)
        try record.willReplace()
        try record.willReplace()
        #expect(!record.isComplete(for: key), "a build replacing the output removed the record")
        try record.didBuild(key)
        try FileManager.default.removeItem(atPath: "\(folder)/p.tif")
        #expect(!record.isComplete(for: key), "the output is gone")
    }

    /// A folder pyramid's record is the container's marker: written as the tree commits, emptied while another
    /// build replaces it.
    @Test func aFolderOutputsRecordIsItsContainersMarker() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let entries = ["p_files", "p.dzi"]
        let record = CompletionRecord.folder(folder, entries: entries)
        func build(_ key: BuildKey, commit: Bool) throws {
            let container = try DirectoryContainer(parent: folder, entries: entries, buildKey: key.description,
                                                   partial: .discard)
            try container.write([1, 2, 3], to: "p_files/0/0_0.jpeg")
            try container.write([4, 5], to: "p.dzi")
            if commit { try container.commit() }
        }
        let first = BuildKey(source: "a.png", options: []), second = BuildKey(source: "b.png", options: [])
        try build(first, commit: false)
        #expect(!record.isComplete(for: first), "a partial build is not complete")
        try build(first, commit: true)
        #expect(record.isComplete(for: first) && !record.isComplete(for: second))
        #expect(record.outputBytes() == 5 + first.description.utf8.count)
        try build(second, commit: true)
        #expect(record.isComplete(for: second) && !record.isComplete(for: first))
        try FileManager.default.removeItem(atPath: "\(folder)/p.dzi")
        #expect(!record.isComplete(for: second), "an entry is missing")
    }

    @Test func aZipsRecordIsItsComment() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = BuildKey(source: "a.png", options: ["container=zip"])
        let zip = try ZipContainer(path: "\(folder)/p.zip", partial: .discard, buildKey: key.description)
        try zip.write([1, 2, 3], to: "p/0/0/0.jpg")
        let record = CompletionRecord.zip("\(folder)/p.zip")
        #expect(!record.isComplete(for: key), "not committed")
        try zip.commit()
        #expect(record.isComplete(for: key))
        #expect(!record.isComplete(for: BuildKey(source: "b.png", options: ["container=zip"])))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/p.zip"))
        try bytes.dropLast(4).write(to: URL(fileURLWithPath: "\(folder)/p.zip"))
        #expect(!record.isComplete(for: key), "a cut archive")
    }

    @Test func aBatchResumesAPartialBuildOnlyOfTheSameKey() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tile = "p/0/0/0.jpg"
        func partialTile(key: String, policy: PartialBuildPolicy) throws -> Bool {
            try DirectoryContainer(parent: folder, entries: ["p"], buildKey: key, partial: policy)
                .hasCompleteFile(at: tile)
        }
        let jpeg = try ImageWriter.encode(TestImages.make(width: 8, height: 8, format: .rgb8), as: .jpeg,
                                          options: EncodeOptions())
        try DirectoryContainer(parent: folder, entries: ["p"], buildKey: "a", partial: .discard).write(jpeg, to: tile)
        #expect(try partialTile(key: "a", policy: .resumeIfSameBuild), "the same build reuses its tiles")
        #expect(throws: TesseraError.self) { try partialTile(key: "b", policy: .resume) }
        #expect(try !partialTile(key: "b", policy: .resumeIfSameBuild), "another build starts again")
        #expect(try !partialTile(key: "b", policy: .resumeIfSameBuild))
    }
}
