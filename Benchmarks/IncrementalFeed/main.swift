// Decodes one image file the way a network client would with IncrementalImageSource (the file arriving in chunks,
// each update given everything received so far) or one-shot through ImageSource, for Benchmarks/incremental.py.
//
//     IncrementalFeed FILE oneshot
//     IncrementalFeed FILE incremental [--chunk BYTES] [--look-every N]
//
// --look-every N makes a partial image after every N updates, as a viewer refreshing its display would.
// Prints the mode, the image size, the updates made and the partial images made; the time and peak memory are
// measured from outside (/usr/bin/time).
import Foundation
import Tessera

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: IncrementalFeed FILE oneshot|incremental [--chunk BYTES] [--look-every N]") }
let path = arguments[1], mode = arguments[2]
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
    guard let number = Int(arguments[index + 1]), number > 0 else { fail("\(name) takes a positive number") }
    return number
}
let chunk = option("--chunk", default: 64 * 1024), lookEvery = option("--look-every", default: Int.max)

do {
    switch mode {
    case "oneshot":
        let image = try ImageSource(path: path).makeReader().readAll()
        print("oneshot \(image.width)x\(image.height)")
    case "incremental":
        guard let file = FileHandle(forReadingAtPath: path) else { fail("\(path): cannot open") }
        let total = Int(try file.seekToEnd())
        try file.seek(toOffset: 0)
        // The client's buffer: everything received so far, grown chunk by chunk.
        var received: [UInt8] = []
        received.reserveCapacity(total)
        let source = IncrementalImageSource(name: path)
        var updates = 0, looks = 0
        while received.count < total {
            guard let data = try file.read(upToCount: chunk), !data.isEmpty else { break }
            received.append(contentsOf: data)
            source.update(data: received, isFinal: received.count == total)
            updates += 1
            if updates % lookEvery == 0, try source.makeImage() != nil { looks += 1 }
        }
        guard source.status == .complete, let image = try source.makeImage() else {
            fail("\(path): \(source.status) \(source.error.map { "\($0)" } ?? "")")
        }
        print("incremental \(image.pixels.width)x\(image.pixels.height) updates \(updates) partial-images \(looks)")
    default:
        fail("unknown mode '\(mode)'")
    }
} catch {
    fail("\(error)")
}
