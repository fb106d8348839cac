import Foundation

/// A C `FILE` writing into memory (`open_memstream`), for encoders over libraries that write to a `FILE` and
/// seek back in it (OpenJPEG's JP2 boxes): the bytes written, once `bytes()` flushed them.
final class MemoryFile {
    let handle: UnsafeMutablePointer<FILE>
    /// Where `open_memstream` keeps its buffer and its length: heap cells, stable while the stream lives.
    private let buffer = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: 1)
    private let length = UnsafeMutablePointer<Int>.allocate(capacity: 1)

    /// A new, empty stream; `name` is what errors call it.
    init(name: String) throws {
        buffer.initialize(to: nil)
        length.initialize(to: 0)
        guard let handle = open_memstream(buffer, length) else {
            buffer.deallocate()
            length.deallocate()
            throw TesseraError.io(path: name, detail: "cannot open a stream in memory")
        }
        self.handle = handle
    }

    deinit {
        fclose(handle)
        free(buffer.pointee)
        buffer.deallocate()
        length.deallocate()
    }

    /// Everything written so far.
    func bytes() -> [UInt8] {
        fflush(handle)
        guard let start = buffer.pointee else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: start, count: length.pointee))
    }
}
