import CCodecShims
import CTIFF

/// An open libtiff handle whose errors are captured per handle (see `tiff_shim.c`), so that every failure
/// becomes a `TesseraError` carrying libtiff's own message and the file's name.
final class TIFFFile: TIFFLayoutFields {
    /// The path or name used in error messages.
    let name: String
    /// The file's size in bytes (0 when writing), to tell truncated data from corrupt data.
    let byteCount: Int
    private let state: OpaquePointer
    /// The libtiff handle, valid for the life of this object.
    let handle: OpaquePointer
    /// The cursor the file is read through, kept alive as long as the handle (nil when writing).
    private let cursor: ReadCursor?
    /// The file's directories read from its bytes, for walks that need only a few of their fields (nil when
    /// writing, or when the header is not TIFF's).
    let directories: TIFFDirectoryReader?
    /// The page whose directory libtiff holds (it reads the first on opening); nil while a SubIFD is current, and
    /// when writing. Selecting it again would read the directory again: some 20 us of libtiff's each time.
    private var currentPage: Int?

    private init(state: OpaquePointer?, name: String, byteCount: Int, writing: Bool, cursor: ReadCursor? = nil,
                 directories: TIFFDirectoryReader? = nil) throws {
        guard let state else { throw TesseraError.io(path: name, detail: "out of memory opening the TIFF") }
        guard let handle = tessera_tiff_handle(state) else {
            let message = String(cString: tessera_tiff_message(state))
            tessera_tiff_destroy(state)
            if let failure = cursor?.file.failure { throw failure }
            throw writing ? Self.writeFailure("cannot create the TIFF", message: message, name: name)
                : Self.readFailure("while opening", message: message, name: name, truncated: false)
        }
        self.state = state
        self.handle = handle
        self.name = name
        self.byteCount = byteCount
        self.cursor = cursor
        self.directories = directories
        currentPage = writing ? nil : 0
    }

    /// Opens a TIFF for reading without memory-mapping it; libtiff's own allocations are capped by `budget`.
    convenience init(reading input: ImageInput, budget: MemoryBudget) throws {
        try CodecLibrary.tiff.require()
        switch input {
        case let .file(path):
            try self.init(reading: BlockCachedFile(path: path), name: path, mode: "rm", budget: budget)
        case let .remote(file):
            // Tile offsets load on demand ("O"), so opening a large pyramid reads its directories, not its tables.
            try self.init(reading: file, name: file.url, mode: "rmO", budget: budget)
        case let .bytes(bytes, name):
            // libtiff reads through callbacks after this call returns, so the shim keeps its own copy.
            try budget.check(bytes.count, for: "a copy of the TIFF data", path: name)
            let state = bytes.withUnsafeBufferPointer {
                tessera_tiff_open_memory($0.baseAddress, $0.count, name, Int64(budget.limit))
            }
            try self.init(state: state, name: name, byteCount: bytes.count, writing: false,
                          directories: TIFFDirectoryReader(bytes: bytes, maxValueBytes: budget.limit))
        }
    }

    /// Opens `file` for reading through a `ReadCursor` with libtiff's `mode`.
    private convenience init(reading file: any RandomAccessFile, name: String, mode: String, budget: MemoryBudget) throws {
        let cursor = ReadCursor(file)
        let state = tessera_tiff_open_client(Unmanaged.passUnretained(cursor).toOpaque(), ReadCursor.readCallback,
                                             ReadCursor.seekCallback, ReadCursor.sizeCallback, name, mode,
                                             Int64(budget.limit))
        try self.init(state: state, name: name, byteCount: file.byteCount, writing: false, cursor: cursor,
                      directories: TIFFDirectoryReader(file: file, maxValueBytes: budget.limit))
    }

    /// Opens `descriptor` for writing (libtiff closes it); `bigTIFF` selects 64-bit offsets.
    convenience init(writing descriptor: Int32, name: String, bigTIFF: Bool) throws {
        try CodecLibrary.tiff.require()
        try self.init(state: tessera_tiff_open_fd(descriptor, name, bigTIFF ? "w8" : "w", 0),
                      name: name, byteCount: 0, writing: true)
    }

    deinit { tessera_tiff_destroy(state) }

    /// Writes what libtiff still holds (strips, the directory) to the file and reports a failure; the handle itself
    /// is closed when this object is released.
    func flush() throws {
        tessera_tiff_clear_message(state)
        guard TIFFFlush(handle) != 0 else { throw writeFailure("write failed") }
    }

    // MARK: - Errors

    /// The error for a libtiff call that failed while reading: truncated data when `truncated` or when libtiff's
    /// message says so, otherwise corrupt data. `context` says where, e.g. "at row 4,112 of 8,554".
    func readFailure(_ context: String, truncated: Bool = false) -> TesseraError {
        if let failure = cursor?.file.failure { return failure }
        return Self.readFailure(context, message: message, name: name, truncated: truncated)
    }

    /// The error for a libtiff call that failed while writing, e.g. "cannot write the strip at row 64".
    func writeFailure(_ context: String) -> TesseraError { Self.writeFailure(context, message: message, name: name) }

    /// Forgets the last error, before a call whose failure should be reported on its own.
    func clearMessage() { tessera_tiff_clear_message(state) }

    /// libtiff's first message since the last `clearMessage`.
    private var message: String { String(cString: tessera_tiff_message(state)) }

    /// libtiff says "read error" or "cannot read" when the data ends early; anything else is corrupt data.
    private static func readFailure(_ context: String, message: String, name: String, truncated: Bool) -> TesseraError {
        if message.isEmpty { return truncated ? .truncated(path: name, detail: context) : .corrupt(path: name, detail: context) }
        let lowered = message.lowercased()
        if truncated || lowered.contains("read error") || lowered.contains("cannot read") || lowered.contains("can not read")
            || lowered.contains("end of file") || lowered.contains("past end") {
            return .truncated(path: name, detail: "\(context) (\(message))")
        }
        return .corrupt(path: name, detail: "\(message) (\(context))")
    }

    private static func writeFailure(_ context: String, message: String, name: String) -> TesseraError {
        .io(path: name, detail: message.isEmpty ? context : "\(context): \(message)")
    }

    // MARK: - Fields

    /// A 16-bit field of the current directory, or nil when the file leaves it out.
    func u16(_ tag: Int32) -> UInt16? {
        var value: UInt16 = 0
        return tessera_tiff_get_u16(handle, UInt32(tag), &value) != 0 ? value : nil
    }

    /// A 32-bit field of the current directory, or nil when the file leaves it out.
    func u32(_ tag: Int32) -> UInt32? {
        var value: UInt32 = 0
        return tessera_tiff_get_u32(handle, UInt32(tag), &value) != 0 ? value : nil
    }

    /// The ExtraSamples types (0 unspecified, 1 associated alpha, 2 unassociated alpha).
    func extraSamples() -> [UInt16] {
        var count: UInt16 = 0
        var types: UnsafePointer<UInt16>?
        guard tessera_tiff_get_extra_samples(handle, &count, &types) != 0, let types else { return [] }
        return Array(UnsafeBufferPointer(start: types, count: Int(count)))
    }

    /// The colour map's red, green and blue tables of `2^bits` 16-bit entries each.
    func colorMap(entries: Int) -> [[UInt16]]? {
        var red: UnsafePointer<UInt16>?, green: UnsafePointer<UInt16>?, blue: UnsafePointer<UInt16>?
        guard tessera_tiff_get_colormap(handle, &red, &green, &blue) != 0, let red, let green, let blue else {
            return nil
        }
        return [red, green, blue].map { Array(UnsafeBufferPointer(start: $0, count: entries)) }
    }

    /// Whether the current directory has an ICC profile (tag 34675).
    var hasICCProfile: Bool { tessera_tiff_has_icc_profile(handle) != 0 }

    /// Whether the current directory's pixels are stored in tiles rather than strips.
    var isTiled: Bool { TIFFIsTiled(handle) != 0 }

    /// Sets a 16-bit field or a pseudo-tag (such as JPEGCOLORMODE) taking an integer.
    func set(_ tag: Int32, _ value: Int) throws {
        guard tessera_tiff_set_int(handle, UInt32(tag), Int32(truncatingIfNeeded: value)) != 0 else {
            throw writeFailure("cannot set TIFF tag \(tag)")
        }
    }

    /// Sets a 32-bit field (sizes, rows per strip).
    func set(_ tag: Int32, _ value: UInt32) throws {
        guard tessera_tiff_set_u32(handle, UInt32(tag), value) != 0 else { throw writeFailure("cannot set TIFF tag \(tag)") }
    }

    /// Sets a field of two 16-bit values (YCbCrSubsampling).
    func set(_ tag: Int32, _ first: UInt16, _ second: UInt16) throws {
        guard tessera_tiff_set_u16_pair(handle, UInt32(tag), first, second) != 0 else {
            throw writeFailure("cannot set TIFF tag \(tag)")
        }
    }

    /// Sets the ExtraSamples types, one per sample after the colour samples.
    func setExtraSamples(_ types: [UInt16]) throws {
        guard tessera_tiff_set_extra_samples(handle, UInt16(types.count), types) != 0 else {
            throw writeFailure("cannot set the extra samples")
        }
    }

    /// Where strip or tile `number` of the current directory is stored: its first byte and its byte count.
    func byteRange(ofBlock number: UInt32) -> (offset: UInt64, count: UInt64) {
        (TIFFGetStrileOffset(handle, number), TIFFGetStrileByteCount(handle, number))
    }

    // MARK: - Directories

    /// Makes page `index` current, reading its directory unless it is current already.
    func selectPage(_ index: Int) throws {
        guard index != currentPage else { return }
        clearMessage()
        currentPage = nil
        guard index >= 0, index <= Int(UInt32.max), TIFFSetDirectory(handle, UInt32(index)) != 0 else {
            throw readFailure("reading page \(index)")
        }
        currentPage = index
    }

    /// Makes the directory at byte `offset` current (a SubIFD).
    func selectSubIFD(at offset: UInt64) throws {
        clearMessage()
        currentPage = nil
        guard TIFFSetSubDirectory(handle, offset) != 0 else { throw readFailure("reading the SubIFD at byte \(offset)") }
    }
}
