import Foundation
import Testing
@testable import Tessera

/// FileStamp must give exactly what FileManager gave before it, to the last bit of the Date: caches written with
/// one are keyed by the other's times.
@Test func fileStampEqualsFileManagersSizeAndTime() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("filestamp-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15  // a fixed sequence of times besides the edge cases
    let drawn: [(Int, Int)] = (0..<200).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return (1_000_000_000 + Int(state >> 34), Int(state % 1_000_000_000))
    }
    let times = [(0, 0), (1_700_000_000, 123_456_789), (1_764_590_400, 999_999_999), (2_000_000_000, 1)] + drawn
    for (index, (seconds, nanoseconds)) in times.enumerated() {
        let path = folder.appendingPathComponent("file\(index)").path
        try Data(repeating: 7, count: index % 7 * 1000).write(to: URL(fileURLWithPath: path))
        var stamps = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
        #expect(utimensat(AT_FDCWD, path, &stamps, 0) == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        let stamp = try #require(FileStamp(path: path))
        #expect(stamp.size == attributes[.size] as? Int)
        #expect(stamp.modified == attributes[.modificationDate] as? Date)
        #expect(stamp.modified.timeIntervalSince1970 == (attributes[.modificationDate] as? Date)?.timeIntervalSince1970)
    }
    #expect(FileStamp(path: folder.appendingPathComponent("missing").path) == nil)
}
