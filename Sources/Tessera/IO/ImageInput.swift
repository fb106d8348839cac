import Foundation

/// Where encoded image bytes come from: a file, read as a decoder needs it, or bytes already in memory.
/// `name` is what error messages call it.
public enum ImageInput: Sendable {
    case file(path: String)
    case bytes([UInt8], name: String)

    public var name: String {
        switch self {
        case let .file(path): return path
        case let .bytes(_, name): return name
        }
    }

    /// The total size in bytes.
    func byteCount() throws -> Int {
        switch self {
        case let .file(path): return try CFile(path: path, mode: "rb").size()
        case let .bytes(bytes, _): return bytes.count
        }
    }

    /// Up to `count` bytes from the start, for format detection and header parsing.
    func prefix(_ count: Int) throws -> [UInt8] {
        switch self {
        case let .file(path): return try CFile(path: path, mode: "rb").read(count)
        case let .bytes(bytes, _): return Array(bytes.prefix(count))
        }
    }

    /// All bytes, for formats whose libraries need the whole file in memory; checked against `budget`.
    func readAll(budget: MemoryBudget, purpose: String) throws -> [UInt8] {
        switch self {
        case let .file(path):
            let file = try CFile(path: path, mode: "rb")
            let size = try file.size()
            try budget.check(size, for: purpose, path: path)
            return try file.read(size)
        case let .bytes(bytes, _): return bytes
        }
    }
}

/// A C `FILE` that closes itself: the handle libjpeg, libpng and the streaming readers use.
final class CFile {
    let path: String
    let handle: UnsafeMutablePointer<FILE>

    init(path: String, mode: String) throws {
        guard let handle = fopen(path, mode) else {
            throw TesseraError.io(path: path, detail: String(cString: strerror(errno)).lowercased())
        }
        var status = stat()
        if fstat(fileno(handle), &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            fclose(handle)
            throw TesseraError.io(path: path, detail: "is a directory")
        }
        self.path = path
        self.handle = handle
    }

    deinit { fclose(handle) }

    func size() throws -> Int {
        var status = stat()
        guard fstat(fileno(handle), &status) == 0 else {
            throw TesseraError.io(path: path, detail: String(cString: strerror(errno)).lowercased())
        }
        return Int(status.st_size)
    }

    /// Reads up to `count` bytes from the current position; fewer at the end of the file.
    func read(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, count, handle) }
        if got < count && ferror(handle) != 0 {
            throw TesseraError.io(path: path, detail: "read error")
        }
        bytes.removeLast(count - got)
        return bytes
    }

    func seek(to offset: Int) throws {
        guard fseeko(handle, off_t(offset), SEEK_SET) == 0 else {
            throw TesseraError.io(path: path, detail: "cannot seek to byte \(offset.grouped)")
        }
    }
}
