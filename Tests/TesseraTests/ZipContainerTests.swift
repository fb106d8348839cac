import Foundation
import Testing
@testable import Tessera

/// The zip container's archive, read back from its end records.
@Suite struct ZipContainerTests {
    /// The names the central directory lists, in order, in an archive whose comment is `comment`.
    private func listedNames(_ bytes: [UInt8], comment: String) -> [String] {
        func value(_ at: Int, _ count: Int) -> Int { (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        let end = bytes.count - 22 - comment.utf8.count
        guard value(end, 4) == 0x0605_4B50, value(end + 20, 2) == comment.utf8.count else { return [] }
        var offset = value(end + 16, 4), names: [String] = []
        for _ in 0..<value(end + 10, 2) {
            let nameLength = value(offset + 28, 2), extra = value(offset + 30, 2), comment = value(offset + 32, 2)
            names.append(String(decoding: bytes[offset + 46..<offset + 46 + nameLength], as: UTF8.self))
            offset += 46 + nameLength + extra + comment
        }
        return names
    }

    /// A resumed build whose killed run had already written the metadata writes it again: the archive must
    /// still list each name once.
    @Test func writingANameAgainReplacesItsEntry() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = "\(folder)/p.zip"
        let zip = try ZipContainer(path: path, partial: .discard, buildKey: "key")
        try zip.write(Array("first".utf8), to: "p/info.json")
        try zip.write([1, 2, 3], to: "p/0/0/0.jpg")
        try zip.write(Array("second".utf8), to: "p/info.json")
        try zip.commit()
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(listedNames(bytes, comment: "key") == ["p/0/0/0.jpg", "p/info.json"], "the build key is the comment")
    }
}
