import CCodecShims
import Foundation

/// A read position in a `RandomAccessFile`, for readers that read and seek like a file (libtiff's, stdio's):
/// while reads follow one another, each asks for twice the read-ahead of the one before (up to
/// `largestReadAhead`), so a remote stream costs a few growing requests; a seek elsewhere starts over.
final class ReadCursor {
    let file: any RandomAccessFile
    /// The offset the next read starts at.
    var position = 0
    private var sequentialEnd = 0
    private var readAhead = 0
    /// The most bytes fetched ahead of a sequential read.
    static let largestReadAhead = 4 << 20

    init(_ file: any RandomAccessFile) { self.file = file }

    /// Fills `buffer` from the position and moves it; fewer bytes only at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        readAhead = position == sequentialEnd && position > 0
            ? min(max(2 * readAhead, file.blockSize), Self.largestReadAhead) : 0
        let got = try file.read(into: buffer, at: position, readAhead: readAhead)
        position += got
        sequentialEnd = position
        return got
    }

    /// Moves the position as `lseek` does (`SEEK_SET`, `SEEK_CUR`, `SEEK_END`); nil for a negative result.
    func seek(_ offset: Int, whence: Int32) -> Int? {
        let base = whence == SEEK_CUR ? position : whence == SEEK_END ? file.byteCount : 0
        let target = base + offset
        guard target >= 0 else { return nil }
        position = target
        return target
    }

    /// The C read callback over a cursor passed unretained as the context; a failure is kept by the file.
    static let readCallback: tessera_read_callback = { context, buffer, count in
        let cursor = Unmanaged<ReadCursor>.fromOpaque(context!).takeUnretainedValue()
        guard let buffer else { return -1 }
        return (try? cursor.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: count))) ?? -1
    }

    /// The C seek callback over a cursor passed unretained as the context.
    static let seekCallback: tessera_seek_callback = { context, offset, whence in
        let cursor = Unmanaged<ReadCursor>.fromOpaque(context!).takeUnretainedValue()
        return cursor.seek(Int(offset), whence: whence).map(Int64.init) ?? -1
    }

    /// The C size callback over a cursor passed unretained as the context.
    static let sizeCallback: tessera_size_callback = { context in
        Int64(Unmanaged<ReadCursor>.fromOpaque(context!).takeUnretainedValue().file.byteCount)
    }
}
