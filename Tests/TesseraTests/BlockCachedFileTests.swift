import Foundation
import Testing
@testable import Tessera

/// Reads through the cached blocks give the file's bytes wherever they start and end: within a block, across
/// blocks, larger than a block (straight from the file), more blocks than are kept, and past the end.
@Test func blockCachedReadsAreTheFilesBytes() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("blocks-\(getpid()).bin").path
    let size = 9 * BlockCachedFile.blockSize + 1234
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    let bytes = (0..<size).map { _ -> UInt8 in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return UInt8(truncatingIfNeeded: state >> 56)
    }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    let file = try BlockCachedFile(path: path)
    #expect(file.byteCount == size)
    let block = BlockCachedFile.blockSize
    var reads = [(0, 8), (block - 3, 6), (5 * block + 17, 3 * block), (size - 10, 100), (size, 5), (2, 1)]
    for _ in 0..<300 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let offset = Int(state >> 33) % size
        reads.append((offset, Int(state % 300) + 1))
    }
    for (offset, count) in reads {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: offset, readAhead: 0) }
        let expected = Array(bytes[min(offset, size)..<min(offset + count, size)])
        #expect(got == expected.count && Array(buffer.prefix(got)) == expected, "\(count) bytes at \(offset)")
    }
    #expect(throws: TesseraError.self) { try BlockCachedFile(path: path + ".missing") }
    #expect(throws: TesseraError.self) { try BlockCachedFile(path: FileManager.default.temporaryDirectory.path) }
}
