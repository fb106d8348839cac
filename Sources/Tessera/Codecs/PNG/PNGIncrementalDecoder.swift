import CCodecShims
import CPNG

/// Decodes a PNG as its bytes arrive, through libpng's progressive reader (`png_process_data`, fed only the
/// bytes past the last update). A plain PNG fills rows top-down; an interlaced one stores each Adam7 pass's pixels
/// at their own positions, and its image is the frame after the last complete pass, each known pixel filling the
/// block it stands for (8x8 after the first pass, 4x8 after the second, ... 1x1 after the seventh).
final class PNGIncrementalDecoder: IncrementalDecoder {
    private let name: String
    private let budget: MemoryBudget
    private let stream: OpaquePointer?
    /// The bytes of the file already given to libpng.
    private var fed = 0
    private(set) var properties: ImageProperties?
    private var format = PixelFormat.rgb8

    /// The block each known pixel fills after `n` complete passes, as masks on x and y (index `n - 1`).
    private static let blockMasks: [(x: Int, y: Int)] = [(~7, ~7), (~3, ~7), (~3, ~3), (~1, ~3), (~1, ~1), (~0, ~1),
                                                         (~0, ~0)]

    init(name: String, budget: MemoryBudget) {
        self.name = name
        self.budget = budget
        stream = tessera_png_stream_create(budget.limit)
    }

    deinit { tessera_png_stream_destroy(stream) }

    private var state: tessera_png_stream_state { tessera_png_stream_progress(stream).pointee }

    func update(_ data: UnsafeRawBufferPointer, isFinal: Bool) throws -> IncrementalProgress {
        guard let stream else { throw TesseraError.io(path: name, detail: "cannot create a PNG decoder") }
        if data.count > fed {
            let status = tessera_png_stream_process(stream, data.baseAddress!.assumingMemoryBound(to: UInt8.self) + fed,
                                                    data.count - fed)
            fed = data.count
            if status == 0 {
                if state.needed_bytes > 0 {
                    throw TesseraError.memoryLimit(path: name, needed: Int(clamping: state.needed_bytes),
                                                   limit: budget.limit, purpose: "decoding this PNG incrementally")
                }
                throw TesseraError.corrupt(path: name, detail: "\(String(cString: tessera_png_stream_message(stream)))"
                                           + " (\(place))")
            }
        }
        let state = state
        if state.has_header != 0 && properties == nil {
            properties = PNGDecoder.properties(
                png: tessera_png_stream_struct(stream), info: tessera_png_stream_info_struct(stream),
                colorType: state.color_type, bitDepth: Int(state.bit_depth), channels: Int(state.channels),
                hasTransparency: state.has_transparency != 0)
            format = PixelFormat(PixelFormat.Channels(rawValue: Int(state.bytes_per_pixel) / (state.bit_depth == 16 ? 2 : 1))!,
                                 bitDepth: state.bit_depth == 16 ? 16 : 8)
        }
        if state.complete != 0 { return .complete }
        if isFinal { throw TesseraError.truncated(path: name, detail: place) }
        return state.has_header != 0 ? .incomplete : .readingHeader
    }

    /// Where the data stands, for messages.
    private var place: String {
        let state = state
        if state.has_header == 0 { return "in the header" }
        if state.interlaced != 0 {
            return "in pass \(state.pass + 1) of 7, after its row \(Int(state.rows_in_pass).grouped)"
        }
        return "after row \(Int(state.rows_in_pass).grouped) of \(Int(state.height).grouped)"
    }

    func makeImage() -> PartialImage? {
        let state = state
        guard properties != nil, let pixels = state.pixels else { return nil }
        let width = Int(state.width), height = Int(state.height), complete = state.complete != 0
        guard state.interlaced != 0 else {
            return PartialImage(pixels: ImageBuffer(width: width, height: height, format: format, copying: pixels),
                                validRows: complete ? height : Int(state.rows_in_pass), passes: nil,
                                isComplete: complete)
        }
        let passes = Int(state.completed_passes)
        var image = ImageBuffer(width: width, height: height, format: format)
        if passes > 0 {
            let mask = Self.blockMasks[passes - 1], pixel = Int(state.bytes_per_pixel), rowBytes = state.row_bytes
            image.bytes.withUnsafeMutableBytes { target in
                for y in 0..<height {
                    let source = UnsafeRawPointer(pixels) + (y & mask.y) * rowBytes, row = target.baseAddress! + y * rowBytes
                    for x in 0..<width {
                        (row + x * pixel).copyMemory(from: source + (x & mask.x) * pixel, byteCount: pixel)
                    }
                }
            }
        }
        return PartialImage(pixels: image, validRows: passes > 0 ? height : 0, passes: passes, isComplete: complete)
    }
}
