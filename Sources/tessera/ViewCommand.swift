import Foundation
import Tessera
import TesseraTiling
import TesseraViewer

/// `tessera view`: the native viewer, an SDL2 window on a pyramid, an image or a IIIF server.
enum ViewCommand: Command {
    static let name = "view"
    static let spec = CommandSpec(
        name: name, usage: "view IMAGE|PYRAMID.dzi|https://SERVER/iiif/ID [--size WxH] [--script FILE] [options]",
        summary: "show an image of any size in a window: pan, zoom, tiles decoded in the background",
        details: """
            Opens a Deep Zoom pyramid (.dzi), a pyramidal TIFF, any image Tessera reads, or a IIIF Image API
            image (its http:// or https:// base URI or info.json). Drag or arrow keys pan; the wheel, a pinch or
            +/- zoom; a double click zooms in; 0 or Home fits the image; f toggles full screen; i shows the tile and memory
            overlay; q or Escape quits. A large image that is not a pyramid is read by regions while a pyramidal
            TIFF of it is built in the pyramid cache (--cache), as 'tessera serve' does.
            --script replays a JSON trace of view, pan, zoom, resize, wait, frames and screenshot steps, then
            exits, printing (or writing to --report) a JSON report of frame times and peak memory.
            """,
        options: [size, memoryCache, script, report, software, threads] + PyramidCacheOptions.all,
        renamed: ["pyramid-cache": PyramidCacheOptions.folder.name, "no-pyramid-cache": PyramidCacheOptions.off.name])

    private static let defaults = Viewer.Configuration()
    static let size = Option("size", .windowSize, default: defaults.windowSize, "window size in points")
    static let memoryCache = Option("memory-cache", .byteSize, default: defaults.cacheBytes,
                                    "memory for decoded tiles and their textures")
    static let script = Option("script", ValueKind.text("FILE").optional, "replay this JSON trace, then exit")
    static let report = Option("report", ValueKind.text("FILE").optional,
                               "with --script: write the report here instead of standard output")
    static let software = Option(flag: "software", "draw with SDL's software renderer even when a GPU is available")
    static let threads = CommonOptions.threads("tiles decoded at once")

    static func run(_ arguments: Arguments) throws {
        let target = try arguments.positionals(exactly: 1, "IMAGE, PYRAMID or URL")[0]
        var configuration = Viewer.Configuration()
        configuration.windowSize = arguments[size]
        configuration.cacheBytes = arguments[memoryCache]
        configuration.software = arguments[software]
        configuration.concurrency = arguments[threads]
        configuration.title = "\(target) - tessera view"
        let script = try arguments[Self.script].map(ViewerScript.init(path:))
        if arguments[report] != nil && script == nil { throw UsageError("--report needs --script") }

        let source = try openSource(target, arguments: arguments)
        let viewer = try Viewer(source: source, configuration: configuration)
        defer { viewer.close() }
        Interruption.shared.onInterrupt { _ in Viewer.requestQuit() }
        guard let script else {
            try viewer.run()
            return
        }
        let report = try viewer.run(script: script).json()
        if let path = arguments[Self.report] {
            guard FileManager.default.createFile(atPath: path, contents: report) else {
                throw TesseraError.io(path: path, detail: "cannot write the report")
            }
        } else {
            FileHandle.standardOutput.write(report + Data("\n".utf8))
        }
    }

    /// The tile source for `target`: an image file (pyramidal TIFFs, Deep Zoom and IIIF level-0 folders read by
    /// level), local or at an http(s) URL whose content is a format Tessera reads; any other URL is a IIIF image
    /// (its base URI or info.json, answered by a IIIF server).
    private static func openSource(_ target: String, arguments: Arguments) throws -> any TileSource {
        if RemoteURL.isRemote(target) {
            guard let remote = try? RemoteFile(url: target, budget: arguments.budget),
                  let format = try? ImageFormat.detect(remote.read(at: 0, count: ImageFormat.headerLength)),
                  format != .iiif else { return try IIIFSource(url: target) }
        } else if !FileManager.default.fileExists(atPath: target) {
            throw TesseraError.io(path: target, detail: "no such file")
        }
        return try ImageFileSource(path: target, pyramids: try PyramidCacheOptions.open(arguments),
                                   budget: arguments.budget)
    }
}

extension ValueKind where Value == PixelSize {
    /// A window size in points written WxH, each side from 64 to 16384.
    static var windowSize: Self {
        ValueKind(placeholder: "WxH", requirement: "be WxH with sides from 64 to 16384", read: { text in
            let parts = text.lowercased().split(separator: "x")
            guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
                  (64...16_384).contains(width), (64...16_384).contains(height) else { return nil }
            return PixelSize(width: width, height: height)
        }, show: { "\($0.width)x\($0.height)" })
    }
}
