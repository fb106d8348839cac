// Entropy-decodes every MCU of a sequential JPEG on one core, with libjpeg-turbo (`jpeg_read_coefficients`, all
// coefficients into its whole-image buffer) or with Tessera's own decoder (building the entropy index: every MCU
// decoded, a state saved every few), for Benchmarks/entropy.py.
//
//     EntropyDecode FILE libjpeg|tessera
//
// Prints the mode and, for tessera, the index's stride and size; time and peak memory are measured from outside.
import CCodecShims
import Foundation
import Tessera

let arguments = CommandLine.arguments
guard arguments.count == 3, ["libjpeg", "tessera"].contains(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: EntropyDecode FILE libjpeg|tessera\n".utf8))
    exit(2)
}
let path = arguments[1]
if arguments[2] == "libjpeg" {
    guard let decoder = tessera_jpeg_decoder_create(), let file = fopen(path, "rb") else { exit(1) }
    _ = tessera_jpeg_set_source_file(decoder, file)
    guard tessera_jpeg_read_header(decoder) != 0, tessera_jpeg_read_coefficients(decoder) != 0 else {
        FileHandle.standardError.write(Data("\(path): \(String(cString: tessera_jpeg_decoder_message(decoder)))\n".utf8))
        exit(1)
    }
    tessera_jpeg_decoder_destroy(decoder)
    fclose(file)
    print("libjpeg")
} else {
    do {
        let index = try JPEGEntropyIndex.build(input: .file(path: path), key: try JPEGEntropyIndex.Key(path: path))
        print("tessera stride \(index.stride) bytes \(index.encoded().count)")
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
