import Foundation

/// An input opened once for reads at any offset, from any thread: a local file by `pread` on a descriptor held open
/// (no open, seek or stdio buffer per read), a remote one through its block cache, bytes in memory as they are.
/// What reads a container's parts by the places its index gives: a pyramidal TIFF's stored tiles, a zip's entries.
final class PositionedInput: Sendable {
    let input: ImageInput
    /// The file's size in bytes.
    let byteCount: Int
    /// The local file's descriptor, -1 for other inputs.
    private let descriptor: Int32

    /// Opens `input`; a local file that cannot be opened is an I/O error naming it.
    init(_ input: ImageInput) throws {
        self.input = input
        if case let .file(path) = input {
            descriptor = open(path, O_RDONLY)
            var status = stat()
            guard descriptor >= 0, fstat(descriptor, &status) == 0 else {
                let code = errno
                if descriptor >= 0 { close(descriptor) }
                throw TesseraError.io(path: path, code: code)
            }
            byteCount = Int(status.st_size)
        } else {
            descriptor = -1
            byteCount = try input.byteCount()
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Up to `count` bytes from byte `offset` (fewer past the end); the caller bounds `count`.
    func read(at offset: Int, count: Int) throws -> [UInt8] {
        let wanted = max(0, min(count, byteCount - offset))
        guard offset >= 0, wanted > 0 else { return [] }
        switch input {
        case let .file(path):
            var bytes = [UInt8](repeating: 0, count: wanted)
            var done = 0
            while done < wanted {
                let read = bytes.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress! + done, wanted - done, off_t(offset + done))
                }
                if read < 0 && errno == EINTR { continue }
                guard read > 0 else {
                    if read < 0 { throw TesseraError.io(path: path) }
                    break
                }
                done += read
            }
            bytes.removeLast(wanted - done)
            return bytes
        case let .remote(file): return try file.read(at: offset, count: wanted)
        case let .bytes(bytes, _): return Array(bytes[offset..<offset + wanted])
        }
    }
}
