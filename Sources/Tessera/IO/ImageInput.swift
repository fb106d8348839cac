import CCodecShims
import Foundation

/// Where encoded image bytes come from: a file, read as a decoder needs it, a file on a web server, read by byte
/// ranges, or bytes already in memory. `name` is what error messages call it (the path or the URL).
public enum ImageInput: Sendable {
    case file(path: String)
    case remote(RemoteFile)
    case bytes([UInt8], name: String)

    /// The input a command line names: an `http(s)://` URL opened as a `RemoteFile`, else a file path.
    public static func at(_ location: String, budget: MemoryBudget = .default) throws -> ImageInput {
        RemoteURL.isRemote(location) ? .remote(try RemoteFile(url: location, budget: budget)) : .file(path: location)
    }

    public var name: String {
        switch self {
        case let .file(path): return path
        case let .remote(file): return file.url
        case let .bytes(_, name): return name
        }
    }

    /// What caches know this version of the input by (the pyramid cache, the server's responses): a file's path,
    /// modification time and size; a remote file's URL and version (ETag or Last-Modified), time 0 and size.
    public var cacheIdentity: (key: String, modified: Date, size: Int) {
        switch self {
        case let .remote(file):
            return (file.url + "\n" + file.version.description, Date(timeIntervalSince1970: 0), file.byteCount)
        default:
            let stamp = FileStamp(path: name)
            return (name, stamp?.modified ?? .distantPast, stamp?.size ?? 0)
        }
    }

    /// Whether the bytes are a local file's.
    public var isFile: Bool {
        if case .file = self { return true }
        return false
    }

    /// The total size in bytes.
    func byteCount() throws -> Int {
        switch self {
        case let .file(path): return try CFile(path: path, mode: "rb").size()
        case let .remote(file): return file.byteCount
        case let .bytes(bytes, _): return bytes.count
        }
    }

    /// Up to `count` bytes from the start, for format detection and header parsing.
    func prefix(_ count: Int) throws -> [UInt8] {
        switch self {
        case let .file(path): return try CFile(path: path, mode: "rb").read(count)
        case let .remote(file): return try file.read(at: 0, count: count)
        case let .bytes(bytes, _): return Array(bytes.prefix(count))
        }
    }

    /// A C `FILE` reading a file or a remote file (nil for bytes in memory), for the readers built on stdio.
    func openFile() throws -> CFile? {
        switch self {
        case let .file(path): return try CFile(path: path, mode: "rb")
        case let .remote(file): return try CFile(reading: file)
        case .bytes: return nil
        }
    }

    /// Why the last read of a remote file failed, when it did: what a codec that saw only the data end reports.
    var readFailure: TesseraError? {
        if case let .remote(file) = self { return file.failure }
        return nil
    }

    /// All bytes, for formats whose libraries need the whole file in memory; checked against `budget`.
    func readAll(budget: MemoryBudget, purpose: String) throws -> [UInt8] {
        switch self {
        case let .file(path):
            let file = try CFile(path: path, mode: "rb")
            let size = try file.size()
            try budget.check(size, for: purpose, path: path)
            return try file.read(size)
        case let .remote(file):
            try budget.check(file.byteCount, for: purpose, path: file.url)
            return try file.read(at: 0, count: file.byteCount, readAhead: file.byteCount)
        case let .bytes(bytes, _): return bytes
        }
    }
}

/// A C `FILE` that closes itself: the handle libjpeg, libpng and the streaming readers use. Over a remote file
/// it reads through a `ReadCursor` (stdio buffering 64 KiB, read-ahead growing while reads are sequential).
final class CFile {
    let path: String
    let handle: UnsafeMutablePointer<FILE>
    /// The cursor a remote file is read through, kept alive as long as the `FILE`.
    private let cursor: ReadCursor?

    init(path: String, mode: String) throws {
        guard let handle = fopen(path, mode) else {
            throw TesseraError.io(path: path)
        }
        var status = stat()
        if fstat(fileno(handle), &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            fclose(handle)
            throw TesseraError.io(path: path, detail: "is a directory")
        }
        self.path = path
        self.handle = handle
        cursor = nil
    }

    /// A `FILE` reading `remote` from its start.
    init(reading remote: RemoteFile) throws {
        let cursor = ReadCursor(remote)
        let context = Unmanaged.passUnretained(cursor).toOpaque()
        guard let handle = tessera_open_reader(context, ReadCursor.readCallback, ReadCursor.seekCallback,
                                               64 << 10) else {
            throw TesseraError.io(path: remote.url, detail: "out of memory opening a reader")
        }
        self.path = remote.url
        self.handle = handle
        self.cursor = cursor
    }

    deinit { fclose(handle) }

    func size() throws -> Int {
        if let cursor { return cursor.file.byteCount }
        var status = stat()
        guard fstat(fileno(handle), &status) == 0 else {
            throw TesseraError.io(path: path)
        }
        return Int(status.st_size)
    }

    /// Reads up to `count` bytes from the current position; fewer at the end of the file.
    func read(_ count: Int) throws -> [UInt8] {
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = fread(buffer.baseAddress, 1, count, handle)
        }
        if bytes.count < count && ferror(handle) != 0 {
            throw TesseraError.io(path: path, detail: "read error")
        }
        return bytes
    }

    func seek(to offset: Int) throws {
        guard fseeko(handle, off_t(offset), SEEK_SET) == 0 else {
            throw TesseraError.io(path: path, detail: "cannot seek to byte \(offset.grouped)")
        }
    }
}
