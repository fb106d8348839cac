import CCodecShims
import CPNG

/// One libpng reader with its input open and the header (chunks before the image data) read, freed on deinit.
final class PNGSession {
    let png: OpaquePointer
    let name: String
    private let input: ImageInput
    private let file: CFile?
    private let bytes: UnsafeMutableBufferPointer<UInt8>?

    init(input: ImageInput) throws {
        name = input.name
        self.input = input
        let reader: OpaquePointer?
        switch input {
        case .file, .remote:
            let file = try input.openFile()!
            self.file = file
            self.bytes = nil
            reader = tessera_png_reader_create(file.handle, nil, 0)
        case let .bytes(data, _):
            // libpng reads through the pointer for as long as the reader lives, so it gets stable storage.
            let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(data.count, 1))
            _ = copy.initialize(from: data)
            self.file = nil
            self.bytes = copy
            reader = tessera_png_reader_create(nil, copy.baseAddress, data.count)
        }
        guard let reader else {
            bytes?.deallocate()
            throw TesseraError.io(path: input.name, detail: "cannot create a PNG decoder")
        }
        png = reader
        try check(tessera_png_read_info(png), during: "reading the header")
    }

    deinit {
        tessera_png_destroy(png)
        bytes?.deallocate()
    }

    var structPointer: png_structp { tessera_png_struct(png) }
    var infoPointer: png_infop { tessera_png_info(png) }

    /// Why the last read of a remote file failed, if it did: reported instead of libpng's "read error".
    var readFailure: TesseraError? { input.readFailure }

    /// The message of the last libpng error.
    var message: String { String(cString: tessera_png_message(png)) }

    /// Whether the last error was the data running out rather than bad data.
    var lastErrorWasEndOfData: Bool {
        message.contains("Read Error") || message.contains("unexpected end") || message.contains("Not enough image data")
    }

    /// Turns a shim's 0 into a typed error.
    func check(_ status: Int32, during activity: String) throws {
        guard status == 0 else { return }
        if let failure = readFailure { throw failure }
        if lastErrorWasEndOfData { throw TesseraError.truncated(path: name, detail: "while \(activity)") }
        throw TesseraError.corrupt(path: name, detail: "\(message) (while \(activity))")
    }
}
