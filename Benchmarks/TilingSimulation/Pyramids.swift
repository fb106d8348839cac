import Foundation
import Tessera

/// The inputs the simulation reads: the generated map and one Deep Zoom pyramid per tile size, made once in a
/// work folder and reused by later runs (the map is deterministic, and a pyramid only appears under its name
/// once `DirectoryContainer` has committed it complete).
struct PyramidFiles {
    /// The folder holding the map and the pyramids.
    let folder: String
    /// The map's size in pixels.
    let imageSize: Size

    /// The map's path: the one given, or a generated JPEG in the work folder.
    func mapPath(given: String?) throws -> String {
        if let given { return given }
        let path = "\(folder)/map-\(imageSize.width)x\(imageSize.height).jpg"
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let seconds = try timed { try SyntheticMap.writeJPEG(size: imageSize, to: path + ".partial") }
            try FileManager.default.moveItem(atPath: path + ".partial", toPath: path)
            log("generated \(path) in \(format(seconds, digits: 1)) s")
        }
        return path
    }

    /// The Deep Zoom pyramid of `map` with `tileSize` tiles and no overlap, in `folder`, built with the library's
    /// `PyramidBuilder` (as `tessera tile IN OUT --tile-size N --overlap 0` does) if missing.
    func pyramid(of map: String, tileSize: Int) throws -> DeepZoomLayout {
        let name = "map-\(imageSize.width)x\(imageSize.height)-t\(tileSize)"
        let source = try ImageSource(path: map)
        let reader = try source.makeReader()
        let plan = try PyramidPlan(imageSize: reader.size, tileSize: tileSize, overlap: 0, depth: .onePixel)
        let layout = DeepZoomLayout(plan: plan, name: name, tileFormat: .jpeg)
        if !FileManager.default.fileExists(atPath: "\(folder)/\(name).dzi") {
            var options = PyramidBuilder.Options()
            options.encoding.quality = 75
            let container = try DirectoryContainer(
                parent: folder, entries: layout.topLevelEntries, buildKey: "\(map) \(tileSize)", partial: .discard)
            let builder = PyramidBuilder(
                plan: plan, sink: LayoutSink(layout: layout, container: container), options: options)
            var tiles = 0
            let seconds = try timed { tiles = try builder.build(from: reader).tilesWritten }
            log("built \(name) (\(tiles) tiles) in \(format(seconds, digits: 1)) s")
        }
        return layout
    }
}

/// Runs `body` and returns the wall-clock seconds it took.
func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return seconds(ContinuousClock.now - start)
}

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
}

/// Progress on standard error, so that standard output holds only the table.
func log(_ message: String) {
    FileHandle.standardError.write(Data("[sim] \(message)\n".utf8))
}

/// `value` with `digits` decimals.
func format(_ value: Double, digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}
