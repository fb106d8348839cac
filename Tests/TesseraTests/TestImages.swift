import Foundation
import Testing
@testable import Tessera

/// Deterministic test images, temporary folders and the peer tools (Pillow, libvips) the codec tests compare with.
enum TestImages {
    /// A gradient with a little deterministic noise in every channel; `smooth` leaves the noise out, for lossy codecs.
    static func make(width: Int, height: Int, format: PixelFormat, smooth: Bool = false, seed: UInt32 = 1) -> ImageBuffer {
        var image = ImageBuffer(width: width, height: height, format: format)
        var state = seed &* 2_654_435_761 | 1
        let maxValue = format.bitDepth == 16 ? 65535 : 255
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<format.channelCount {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    let noise = smooth ? 0 : Int(state >> 24) % 32
                    let isAlpha = format.hasAlpha && channel == format.channelCount - 1
                    let ramp = isAlpha ? (x + y) * 255 / max(1, width + height - 2)
                        : (x * (channel + 1) * 255 / max(1, width - 1) + y * 255 / max(1, height - 1)) / 2
                    let value = min(maxValue, (min(255, ramp + noise) * maxValue) / 255 + (maxValue > 255 ? x % 251 : 0))
                    let index = image.offset(ofRow: y) + (x * format.channelCount + channel) * format.bytesPerSample
                    if format.bitDepth == 8 {
                        image.bytes[index] = UInt8(value)
                    } else {
                        image.bytes[index] = UInt8(value & 0xFF)
                        image.bytes[index + 1] = UInt8(value >> 8)
                    }
                }
            }
        }
        return image
    }

    /// A smooth, photo-like gradient with a little texture, so lossy codecs behave as on photographs.
    static func gradient(width: Int, height: Int, format: PixelFormat = .rgb8) -> ImageBuffer {
        var image = ImageBuffer(width: width, height: height, format: format)
        let maxValue = format.bitDepth == 16 ? 65535.0 : 255.0
        image.bytes.withUnsafeMutableBytes { raw in
            for y in 0..<height {
                for x in 0..<width {
                    for channel in 0..<format.channelCount {
                        let phase = Double(channel) * 1.7
                        var value = 0.5 + 0.3 * sin(Double(x) / 13 + phase) * cos(Double(y) / 17 - phase)
                            + 0.15 * Double(x + y) / Double(width + height)
                        if format.hasAlpha && channel == format.channelCount - 1 { value = Double((x * 7 + y) % 256) / 255 }
                        let sample = min(maxValue, max(0, (value * maxValue).rounded()))
                        let index = (y * width + x) * format.channelCount + channel
                        if format.bitDepth == 8 {
                            raw[index] = UInt8(sample)
                        } else {
                            raw.storeBytes(of: UInt16(sample), toByteOffset: 2 * index, as: UInt16.self)
                        }
                    }
                }
            }
        }
        return image
    }

    /// A fresh temporary folder, removed by the caller with `FileManager.removeItem`.
    static func folder() throws -> String {
        let path = NSTemporaryDirectory() + "tessera-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `image` as a progressive JPEG at quality 90 (libjpeg's default progression: AC successive
    /// approximation included) and returns `path`.
    static func writeProgressive(_ image: ImageBuffer, to path: String, subsampling: EncodeOptions.Subsampling) throws
        -> String {
        var options = EncodeOptions()
        options.progressive = true
        options.subsampling = subsampling
        options.quality = 90
        try write(image, to: path, options: options)
        return path
    }

    /// Writes `image` with Tessera's encoder for the path's extension.
    static func write(_ image: ImageBuffer, to path: String, options: EncodeOptions = EncodeOptions()) throws {
        try ImageWriter.write(BufferReader(image), to: path, options: options)
    }

    /// The largest difference between two same-sized buffers' samples.
    static func maxDifference(_ a: ImageBuffer, _ b: ImageBuffer) -> Int {
        precondition(a.size == b.size && a.format == b.format, "buffers differ in size or format")
        var worst = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                for (p, q) in zip(a.pixel(x: x, y: y), b.pixel(x: x, y: y)) { worst = max(worst, abs(p - q)) }
            }
        }
        return worst
    }

    /// The rectangle `rect` of `image`, copied.
    static func crop(_ image: ImageBuffer, _ rect: Rect) -> ImageBuffer {
        var out = ImageBuffer(width: rect.width, height: rect.height, format: image.format)
        let bytesPerPixel = image.format.bytesPerPixel
        for row in 0..<rect.height {
            let from = image.offset(ofRow: rect.y + row) + rect.x * bytesPerPixel
            out.bytes.replaceSubrange(out.offset(ofRow: row)..<out.offset(ofRow: row) + out.bytesPerRow,
                                      with: image.bytes[from..<from + out.bytesPerRow])
        }
        return out
    }
    /// Decodes a whole file with Tessera.
    static func read(_ path: String, _ options: ReadOptions = ReadOptions()) throws -> ImageBuffer {
        try ImageSource(path: path).makeReader(options).readAll()
    }

    /// The mean absolute difference between samples of two images of the same size and format.
    static func meanDifference(_ a: ImageBuffer, _ b: ImageBuffer) -> Double {
        precondition(a.size == b.size && a.format == b.format)
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                total += zip(a.pixel(x: x, y: y), b.pixel(x: x, y: y)).reduce(0) { $0 + abs($1.0 - $1.1) }
            }
        }
        return Double(total) / Double(a.width * a.height * a.format.channelCount)
    }

    /// The Python the peer tests run: the project's own `.venv` (made by `scripts/install-deps`, which puts
    /// Pillow, numpy and pypng in it), or `python3` on PATH when there is none.
    static let python: String = {
        let venv = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
    }()

    /// Runs a command; returns its exit status, or nil when it cannot be started.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) -> Int32? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Skips a peer test, saying why, unless Pillow and numpy can be imported.
    static let needsPillow = ConditionTrait.enabled(
        if: run(python, ["-c", "from PIL import Image; import numpy"]) == 0, "needs Pillow and numpy")
    /// Skips a test, saying why, unless libvips' `vips` command is installed (it writes pyramids, BigTIFF).
    static let needsVips = ConditionTrait.enabled(if: run("vips", ["--version"]) == 0, "needs libvips' `vips` command")

    /// Cuts `bytes` at several points and flips bytes at seeded random places (anywhere, or in the first or last
    /// 512 bytes, where headers and TIFF directories are), calling `check` with each damaged copy and a label.
    static func damagedCopies(of bytes: [UInt8], check: (_ damaged: [UInt8], _ label: String) -> Void) {
        for fraction in [0.02, 0.1, 0.3, 0.5, 0.75, 0.9, 0.99] {
            let cut = Int(Double(bytes.count) * fraction)
            check(Array(bytes.prefix(cut)), "truncated to \(cut) of \(bytes.count) bytes")
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for trial in 0..<40 {
            var damaged = bytes
            for _ in 0..<(1 + trial % 4) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let window = min(bytes.count, 512), offset = Int(state >> 33)
                let index = [offset % bytes.count, offset % window, bytes.count - 1 - offset % window][trial % 3]
                damaged[index] ^= UInt8(truncatingIfNeeded: state >> 13) | 1
            }
            check(damaged, "trial \(trial) with flipped bytes")
        }
    }

    /// Writes `image` as a pyramid of lossless PNG tiles in `layout` ("dz" or "iiif") and returns its descriptor,
    /// or its zip with `zipped`.
    static func pyramid(_ image: ImageBuffer, layout: String, tileSize: Int, overlap: Int = 0,
                        format: TileFormat = .png, skipBlank: Bool = false, zipped: Bool = false) throws -> String {
        let folder = try TestImages.folder()
        let plan = try PyramidPlan(imageSize: image.size, tileSize: tileSize, overlap: overlap,
                                   depth: layout == "dz" ? .onePixel : .oneTile)
        let tileLayout: any PyramidLayout = layout == "dz"
            ? DeepZoomLayout(plan: plan, name: "pyramid", tileFormat: format)
            : IIIFLayout(plan: plan, name: "pyramid", tileFormat: format, baseURI: "http://localhost/pyramid")
        let container: any PyramidContainer = zipped
            ? try ZipContainer(path: folder + "/pyramid.zip", partial: .discard, buildKey: "test")
            : try DirectoryContainer(parent: folder, entries: tileLayout.topLevelEntries, buildKey: "test",
                                     partial: .discard)
        var options = PyramidBuilder.Options()
        options.tileFormat = format
        options.skipBlank = skipBlank
        _ = try PyramidBuilder(plan: plan, sink: LayoutSink(layout: tileLayout, container: container), options: options)
            .build(from: BufferReader(image))
        if zipped { return folder + "/pyramid.zip" }
        return folder + (layout == "dz" ? "/pyramid.dzi" : "/pyramid/info.json")
    }
}
