// Entropy-decodes every MCU of a sequential JPEG on one thread, for Benchmarks/entropy.py:
//
// - `tessera`: Tessera's own decoder (building the entropy index serially: every MCU decoded, its coefficients
//   dropped, a state saved every few);
// - `libjpeg-scale8`: libjpeg-turbo's decode at 1/8 (`djpeg -scale 1/8`'s work in-process: every MCU entropy-decoded,
//   then only a DC-only IDCT and colour conversion of 1/64 of the pixels), the fair floor for entropy decoding;
// - `libjpeg`: libjpeg-turbo's `jpeg_read_coefficients` (all coefficients into its whole-image buffer, whose
//   filling costs more than the decoding).
//
//     EntropyDecode FILE tessera|libjpeg-scale8|libjpeg [RUNS]
//
// Decodes the file RUNS times (default 1) in this process and prints one line per run: the mode, the thread's CPU
// seconds and the wall seconds of that decode alone (process start and the file's first read excluded).
import CCodecShims
import Foundation
import Tessera

let modes = ["tessera", "libjpeg-scale8", "libjpeg"]
let arguments = CommandLine.arguments
guard arguments.count == 3 || arguments.count == 4, modes.contains(arguments[2]),
      let runs = arguments.count == 4 ? Int(arguments[3]) : 1, runs > 0 else {
    FileHandle.standardError.write(Data("usage: EntropyDecode FILE tessera|libjpeg-scale8|libjpeg [RUNS]\n".utf8))
    exit(2)
}
let path = arguments[1], mode = arguments[2]

/// Seconds of CPU this thread has used.
func threadCPU() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("\(path): \(message)\n".utf8))
    exit(1)
}

/// One decode with libjpeg-turbo: at 1/8 with every row read and dropped, or `jpeg_read_coefficients`.
func libjpeg(scaled: Bool) {
    guard let decoder = tessera_jpeg_decoder_create(), let file = fopen(path, "rb") else { fail("cannot open") }
    defer {
        tessera_jpeg_decoder_destroy(decoder)
        fclose(file)
    }
    _ = tessera_jpeg_set_source_file(decoder, file)
    guard tessera_jpeg_read_header(decoder) != 0 else { fail(String(cString: tessera_jpeg_decoder_message(decoder))) }
    guard scaled else {
        guard tessera_jpeg_read_coefficients(decoder) != 0 else {
            fail(String(cString: tessera_jpeg_decoder_message(decoder)))
        }
        return
    }
    let info = tessera_jpeg_decoder_info(decoder)!
    info.pointee.scale_num = 1
    info.pointee.scale_denom = 8
    guard tessera_jpeg_start_decompress(decoder) != 0 else { fail(String(cString: tessera_jpeg_decoder_message(decoder))) }
    let stride = Int(info.pointee.output_width) * Int(info.pointee.output_components)
    let rows = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * 16)
    defer { rows.deallocate() }
    var pointers: [UnsafeMutablePointer<UInt8>?] = (0..<16).map { rows + $0 * stride }
    while info.pointee.output_scanline < info.pointee.output_height {
        var read: JDIMENSION = 0
        let ok = pointers.withUnsafeMutableBufferPointer {
            tessera_jpeg_read_scanlines(decoder, $0.baseAddress, 16, &read)
        }
        guard ok != 0 else { fail(String(cString: tessera_jpeg_decoder_message(decoder))) }
    }
    _ = tessera_jpeg_finish_decompress(decoder)
}

let key: JPEGEntropyIndex.Key
do { key = try JPEGEntropyIndex.Key(path: path) } catch { fail("\(error)") }
for _ in 0..<runs {
    let cpu = threadCPU(), wall = Date()
    switch mode {
    case "tessera":
        do { _ = try JPEGEntropyIndex.build(input: .file(path: path), key: key, workers: 1) } catch { fail("\(error)") }
    case "libjpeg-scale8":
        libjpeg(scaled: true)
    default:
        libjpeg(scaled: false)
    }
    print(String(format: "%@ %.4f %.4f", mode, threadCPU() - cpu, Date().timeIntervalSince(wall)))
}
