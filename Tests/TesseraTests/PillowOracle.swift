import Foundation
import Synchronization
import Testing
@testable import Tessera

/// Fixture folders made in this test run, removed when the process exits.
private let fixtureFolders = Mutex<[URL]>([])

/// Pillow as the oracle for the pure-Swift decoders: a Python script writes test images into a temporary
/// folder, then every image there (also those the tests built byte by byte) gets a `.raw` dump of what Pillow
/// decodes: a line `width height mode` (RGB or RGBA) and the pixels. Python runs once per fixture folder.
enum PillowOracle {
    /// Dumps every BMP and GIF file in the folder given as the first argument, first frame only.
    private static let dumpScript = """
        import sys, glob
        from PIL import Image
        for path in sorted(glob.glob(sys.argv[1] + "/*.bmp") + glob.glob(sys.argv[1] + "/*.gif")):
            im = Image.open(path)
            mode = "RGBA" if im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info else "RGB"
            with open(path + ".raw", "wb") as out:
                out.write(f"{im.size[0]} {im.size[1]} {mode}\\n".encode())
                out.write(im.convert(mode).tobytes())
        """

    /// A new folder holding `files` (name -> bytes), the images `script` writes (run with the folder as
    /// `sys.argv[1]`, after numpy and PIL are imported), and Pillow's dump of each.
    static func fixtures(files: [String: [UInt8]], script: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("tessera-pillow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let isFirst = fixtureFolders.withLock { folders in
            folders.append(folder)
            return folders.count == 1
        }
        if isFirst {
            atexit {
                fixtureFolders.withLock { folders in
                    for folder in folders { try? FileManager.default.removeItem(at: folder) }
                }
            }
        }
        for (name, bytes) in files {
            try Data(bytes).write(to: folder.appendingPathComponent(name))
        }
        let program = "import sys\nimport numpy as np\nfrom PIL import Image\nout = sys.argv[1]\n"
            + script + "\n" + dumpScript
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [TestImages.python, "-c", program, folder.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TesseraError.invalidArgument("\(TestImages.python) failed: " + String(decoding: message, as: UTF8.self))
        }
        return folder
    }

    /// Pillow's decode of the image at `path`: its size, channel count (3 or 4) and pixels.
    static func decoded(_ path: String) throws -> (size: Size, channels: Int, pixels: [UInt8]) {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".raw")))
        guard let newline = data.firstIndex(of: 10) else { throw TesseraError.invalidArgument("bad dump \(path)") }
        let fields = String(decoding: data[..<newline], as: UTF8.self).split(separator: " ")
        let size = Size(width: Int(fields[0]) ?? 0, height: Int(fields[1]) ?? 0)
        return (size, fields[2] == "RGBA" ? 4 : 3, Array(data[(newline + 1)...]))
    }

    /// Checks that Tessera reads the file at `path` exactly as Pillow does; gray output is compared as RGB.
    static func expectSameAsPillow(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = try decoded(path)
        let image = try ImageSource(path: path).makeReader().readAll()
        #expect(image.size == expected.size, "\(path)", sourceLocation: sourceLocation)
        let ours = expanded(image, to: expected.channels)
        guard ours != expected.pixels else { return }
        let first = zip(ours, expected.pixels).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(ours.count, expected.pixels.count)
        let pixel = first / expected.channels, width = max(1, image.width)
        let message = "\(path): differs from Pillow first at pixel (\(pixel % width), \(pixel / width))"
        Issue.record("\(message) of \(image.size) \(image.format)", sourceLocation: sourceLocation)
    }

    /// The buffer's pixels with `channels` channels: gray replicated to RGB; other formats must already match.
    static func expanded(_ image: ImageBuffer, to channels: Int) -> [UInt8] {
        guard image.format.channels == .gray else {
            return image.format.channelCount == channels ? image.bytes : []
        }
        return image.bytes.flatMap { value in [value, value, value] + (channels == 4 ? [255] : []) }
    }
}

/// A fixed pseudo-random sequence (SplitMix64), so that test images are the same on every run.
struct TestRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// `count` bytes below `bound`.
    mutating func bytes(_ count: Int, below bound: Int = 256) -> [UInt8] {
        (0..<count).map { _ in UInt8(next() % UInt64(bound)) }
    }
}

/// Reading `path` (whole) and then a few regions of it: each region equals the same rectangle of the whole.
func expectRegionsMatchFullRead(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let source = try ImageSource(path: path)
    let full = try source.makeReader().readAll()
    let width = full.width, height = full.height
    let regions = [Rect(x: 0, y: 0, width: 1, height: 1),
                   Rect(x: width / 3, y: height / 4, width: max(1, width / 2), height: max(1, height / 2)),
                   Rect(x: width - 1, y: height - 1, width: 1, height: 1),
                   Rect(x: 1 % width, y: 0, width: width - 1 % width, height: height)]
    for region in regions where !region.isEmpty {
        let part = try source.makeReader(ReadOptions(region: region)).readAll()
        let bytesPerPixel = full.format.bytesPerPixel
        var expected: [UInt8] = []
        for y in region.y..<region.maxY {
            let start = full.offset(ofRow: y) + region.x * bytesPerPixel
            expected += full.bytes[start..<start + region.width * bytesPerPixel]
        }
        #expect(part.size == region.size && Array(part.bytes.prefix(expected.count)) == expected,
                "\(path) region \(region)", sourceLocation: sourceLocation)
    }
}

/// Decodes `bytes` whole and returns the error, if any; a trap would end the test run, which is the point.
func decodeError(_ bytes: [UInt8], allowPartial: Bool = false, name: String = "broken") -> Error? {
    do {
        // A small budget keeps damaged sizes from allocating much before they are rejected.
        let budget = MemoryBudget(limit: 256 << 10)
        let source = try ImageSource(bytes: bytes, name: name, budget: budget)
        _ = try source.makeReader(ReadOptions(allowPartial: allowPartial)).readAll(budget: budget, name: name)
        return nil
    } catch {
        return error
    }
}

/// Truncates `bytes` at many offsets and flips bytes at many places: every decode either succeeds or throws
/// a `TesseraError`.
func expectDamageGivesTesseraErrors(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    var random = TestRandom(seed: UInt64(bytes.count))
    var offsets = Array(0..<min(bytes.count, 80))
    offsets += stride(from: 80, to: bytes.count, by: max(1, bytes.count / 97)).map { $0 }
    for length in offsets {
        for allowPartial in [false, true] {
            if let error = decodeError(Array(bytes.prefix(length)), allowPartial: allowPartial) {
                #expect(error is TesseraError, "cut at \(length): \(error)", sourceLocation: sourceLocation)
            }
        }
    }
    for _ in 0..<200 {
        var damaged = bytes
        for _ in 0..<1 + Int(random.next() % 3) {
            let position = Int(random.next() % UInt64(bytes.count))
            damaged[position] ^= UInt8(1 + random.next() % 255)
        }
        if let error = decodeError(damaged) {
            #expect(error is TesseraError, "\(error)", sourceLocation: sourceLocation)
        }
    }
}
