import Foundation

/// A local file read at any offset through a few cached blocks. libtiff reads a directory a few bytes at a time
/// (its entry count, its entries, each value stored apart), seeking between them, and walks the first directory
/// again for each pyramid level: over a plain descriptor, opening a pyramidal TIFF cost some 250 system calls,
/// through the blocks a handful of `pread`s. Reads of a block or more go straight to the file.
final class BlockCachedFile: RandomAccessFile {
    let path: String
    let byteCount: Int
    private(set) var failure: TesseraError?
    /// The open file, read only by `pread` on its descriptor (its stdio buffer is never used).
    private let file: CFile
    /// The cached blocks, the most recently used last; block `index` holds bytes from `index * blockSize`.
    private var blocks: [(index: Int, bytes: [UInt8])] = []

    /// Bytes per block: a directory and the values stored beside it (a level's tile offsets) in one or two.
    static let blockSize = 16 << 10
    /// Blocks kept: a pyramid's directories lie apart, each after its level's tiles.
    static let blockCount = 8

    /// Opens `path` for reading; a directory or a file that cannot be opened is an I/O error naming it.
    init(path: String) throws {
        file = try CFile(path: path, mode: "rb")
        self.path = path
        byteCount = try file.size()
    }

    var blockSize: Int { Self.blockSize }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, readAhead: Int) throws -> Int {
        guard offset >= 0, offset < byteCount, buffer.count > 0 else { return 0 }
        let end = min(byteCount, offset + buffer.count)
        if end - offset >= Self.blockSize {
            return try readFile(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<(end - offset)]), at: offset)
        }
        var position = offset
        while position < end {
            let index = position / Self.blockSize
            let start = position - index * Self.blockSize
            let count = try withBlock(index) { block -> Int in
                let count = min(end - position, block.count - start)
                if count > 0 {
                    (buffer.baseAddress! + (position - offset)).copyMemory(from: block.baseAddress! + start, byteCount: count)
                }
                return count
            }
            guard count > 0 else { break }  // the file is shorter than it was when opened
            position += count
        }
        return position - offset
    }

    /// Calls `body` with block `index`, read from the file unless cached (most reads are of the block the read
    /// before was of: the most recently used, left where it is).
    private func withBlock<T>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> T) throws -> T {
        if let cached = blocks.lastIndex(where: { $0.index == index }) {
            if cached != blocks.count - 1 { blocks.append(blocks.remove(at: cached)) }
        } else {
            let start = index * Self.blockSize, count = min(Self.blockSize, byteCount - start)
            var failure: (any Error)?
            let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                do {
                    initialized = try readFile(into: UnsafeMutableRawBufferPointer(buffer), at: start)
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { throw failure }
            if blocks.count == Self.blockCount { blocks.removeFirst() }
            blocks.append((index, bytes))
        }
        return blocks[blocks.count - 1].bytes.withUnsafeBytes(body)
    }

    /// Fills `buffer` from the file at `offset` with `pread`; fewer bytes only at its end.
    private func readFile(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        var done = 0
        while done < buffer.count {
            let got = pread(fileno(file.handle), buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                let error = TesseraError.io(path: path, action: "read error")
                failure = error
                throw error
            }
            if got == 0 { break }
            done += got
        }
        return done
    }
}
