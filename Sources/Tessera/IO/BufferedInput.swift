import Foundation

/// Random-access, buffered reading of an `ImageInput` for the pure-Swift decoders (BMP, GIF): a file is read
/// through a fixed window so that byte-at-a-time parsing costs no system call per byte and memory stays
/// bounded; bytes already in memory are read in place. Reads past the end return fewer bytes, never trap:
/// decoders turn a short read into `TesseraError.truncated` with the row they were on.
final class BufferedInput {
    /// The file, or nil when the whole input already sits in `window`.
    private let file: CFile?
    /// The bytes from `windowStart`; for a file a window refilled on demand, for bytes the whole input.
    private var window: [UInt8]
    private var windowStart = 0
    /// The size of the whole input in bytes.
    let count: Int
    /// The offset of the next byte `readByte()` or `read(into:)` returns.
    private(set) var offset = 0
    /// The input's name, for error messages.
    let name: String

    /// Bytes read from a file at a time; large enough to amortise the system call, small enough not to matter.
    private static let windowSize = 64 << 10

    /// What a failed read reports: a remote file's own failure (its URL and status), else a read error.
    private var readError: TesseraError { input.readFailure ?? .io(path: name, detail: "read error") }
    private let input: ImageInput

    init(_ input: ImageInput) throws {
        self.input = input
        name = input.name
        switch input {
        case .file, .remote:
            let file = try input.openFile()!
            self.file = file
            count = try file.size()
            window = []
        case let .bytes(bytes, _):
            file = nil
            count = bytes.count
            window = bytes
        }
    }

    /// Moves the read position; a position past the end is allowed and makes every later read come up short.
    func seek(to position: Int) {
        offset = max(0, position)
    }

    /// Moves the read position `bytes` forward.
    func skip(_ bytes: Int) {
        let (moved, overflow) = offset.addingReportingOverflow(max(0, bytes))
        offset = overflow ? Int.max : moved
    }

    /// The next byte, or nil at the end of the input.
    @inline(__always) func readByte() throws -> UInt8? {
        let index = offset &- windowStart
        if index >= 0 && index < window.count {
            offset += 1
            return window[index]
        }
        guard try refill() else { return nil }
        offset += 1
        return window[0]
    }

    /// Fills `buffer` from the current position; returns how many bytes were read (fewer only at the end).
    /// A read the window does not hold goes straight from the file to `buffer`, leaving the window alone, so
    /// that rows read back to front (bottom-up bitmaps) cost one read each.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0, offset < count else { return 0 }
        let index = offset - windowStart
        if let file, !(index >= 0 && index + buffer.count <= window.count) {
            try file.seek(to: offset)
            let got = fread(buffer.baseAddress!, 1, buffer.count, file.handle)
            if got < buffer.count && ferror(file.handle) != 0 {
                throw readError
            }
            offset += got
            return got
        }
        let got = min(buffer.count, window.count - index)
        window.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + index, byteCount: got)
        }
        offset += got
        return got
    }

    /// Loads the window at `offset`; false at the end of the input.
    private func refill() throws -> Bool {
        guard let file, offset < count else { return false }
        try file.seek(to: offset)
        do {
            window = try file.read(min(Self.windowSize, count - offset))
        } catch {
            throw readError
        }
        windowStart = offset
        return !window.isEmpty
    }
}
