import COpenJPEG
import Foundation

/// The bytes of a JPEG 2000 file as OpenJPEG reads them: a file through a C `FILE` or bytes in memory, with the
/// position that OpenJPEG's read, skip and seek callbacks move. Also read directly by `JP2Boxes`.
final class JPEG2000ByteSource {
    private enum Storage {
        case file(CFile)
        case bytes([UInt8])
    }

    private let storage: Storage
    private let input: ImageInput
    /// Why the last read of a remote file failed, if it did: reported instead of OpenJPEG's "end of stream".
    var readFailure: TesseraError? { input.readFailure }
    /// The input's size in bytes, and its name for messages.
    let length: Int
    let name: String
    /// Where the next read starts, and where the C file's own position is (to seek only when they differ).
    private(set) var position = 0
    private var filePosition = 0

    init(_ input: ImageInput) throws {
        name = input.name
        self.input = input
        switch input {
        case .file, .remote:
            let file = try input.openFile()!
            storage = .file(file)
            length = try file.size()
        case let .bytes(bytes, _):
            storage = .bytes(bytes)
            length = bytes.count
        }
    }

    /// Copies up to `count` bytes from the position into `buffer`; returns how many (0 at the end or on an error).
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        let wanted = min(count, length - position)
        guard wanted > 0 else { return 0 }
        let got: Int
        switch storage {
        case let .file(file):
            if filePosition != position {
                guard fseeko(file.handle, off_t(position), SEEK_SET) == 0 else { return 0 }
                filePosition = position
            }
            got = fread(buffer, 1, wanted, file.handle)
            filePosition += got
        case let .bytes(bytes):
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + position, byteCount: wanted) }
            got = wanted
        }
        position += got
        return got
    }

    /// Up to `count` bytes at `offset` (fewer at the end), leaving the position where it was.
    func bytes(at offset: Int, count: Int) -> [UInt8] {
        let saved = position
        defer { position = saved }
        guard offset >= 0, offset < length else { return [] }
        position = offset
        var bytes = [UInt8](repeating: 0, count: max(0, min(count, length - offset)))
        let got = bytes.withUnsafeMutableBytes { read(into: $0.baseAddress!, count: $0.count) }
        bytes.removeLast(bytes.count - got)
        return bytes
    }

    /// Moves the position to `offset`, past the end too (as `fseek` does: reads there find nothing); false (and
    /// no move) for a negative offset.
    func seek(to offset: Int) -> Bool {
        guard offset >= 0 else { return false }
        position = offset
        return true
    }

    /// How far OpenJPEG reads ahead, in bytes: little for reads of a few tiles, so that opening a file for one
    /// tile reads little of it; 1 MiB (opj_decompress's own) for decodes across the whole width (a thumbnail's
    /// level, a full decode), which read every tile-part of their rows: a 64 KiB buffer read the 100 MP sample's
    /// 15 MB one and a half times over, in 674 reads and 100 seeks.
    enum ReadAhead: Int {
        case tiles = 65_536
        case wholeRows = 1_048_576
    }

    /// An OpenJPEG input stream over these bytes, from the start, reading `readAhead` at a time. The stream keeps
    /// this object unretained: whoever holds the stream holds the source.
    func makeStream(readAhead: ReadAhead) -> UnsafeMutablePointer<opj_stream_t?>? {
        position = 0
        guard let stream = opj_stream_create(readAhead.rawValue, 1) else { return nil }
        opj_stream_set_user_data(stream, Unmanaged.passUnretained(self).toOpaque(), nil)
        opj_stream_set_user_data_length(stream, UInt64(length))
        opj_stream_set_read_function(stream) { buffer, count, context in
            let source = Unmanaged<JPEG2000ByteSource>.fromOpaque(context!).takeUnretainedValue()
            let got = source.read(into: buffer!, count: count)
            // OpenJPEG takes (size_t)-1 for the end of the stream; size_t is Int in Swift, so that is -1.
            return got == 0 ? -1 : got
        }
        // Skips and seeks behave as OpenJPEG's own file stream's `fseeko`: past the end is allowed (OpenJPEG
        // checks against the length it was given), before the start is not.
        opj_stream_set_skip_function(stream) { count, context in
            let source = Unmanaged<JPEG2000ByteSource>.fromOpaque(context!).takeUnretainedValue()
            return source.seek(to: source.position + Int(count)) ? count : -1
        }
        opj_stream_set_seek_function(stream) { offset, context in
            let source = Unmanaged<JPEG2000ByteSource>.fromOpaque(context!).takeUnretainedValue()
            return source.seek(to: Int(offset)) ? 1 : 0
        }
        return stream
    }
}
