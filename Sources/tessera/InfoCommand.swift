import Foundation
import Tessera

/// `tessera info`: what a file holds, read from its header without decoding pixels (or all of them with
/// `--verify`), for people or, with `--json`, for programs.
enum InfoCommand: Command {
    static let name = "info"
    static let spec = CommandSpec(
        name: name, usage: "info FILE... [--json] [--verify]",
        summary: "show an image's size, pixel format and metadata without decoding it",
        details: "With several files, a file that cannot be read is reported and the rest are still shown. "
            + "A FILE - is standard input, read whole within --memory-limit.",
        options: [json, verify, PyramidCacheOptions.folder])

    static let json = Option(flag: "json", "print JSON: an object for one file, an array for several")
    static let verify = Option(flag: "verify", "decode every pixel too, to check that the file is intact")

    /// One file's report: its properties, or the error that stopped them being read.
    private struct Report: Encodable {
        let path: String
        let properties: ImageProperties?
        /// JPEG: the number of scans.
        let scans: Int?
        let verified: Bool?
        let error: String?

        enum CodingKeys: String, CodingKey { case path, scans, verified, error }

        func encode(to encoder: any Encoder) throws {
            try properties?.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(path, forKey: .path)
            try container.encodeIfPresent(scans, forKey: .scans)
            try container.encodeIfPresent(verified, forKey: .verified)
            try container.encodeIfPresent(error, forKey: .error)
        }
    }

    static func run(_ arguments: Arguments) throws {
        let paths = arguments.positionals
        guard !paths.isEmpty else { throw UsageError("expected at least one FILE") }
        try StandardStreams.requireReadOnce(paths)
        let budget = arguments.budget
        let folder = arguments[PyramidCacheOptions.folder]
        let reports = paths.map { path in
            report(for: path, verify: arguments[verify], budget: budget, entropyIndexFolder: folder)
        }
        if arguments[json] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = reports.count == 1 ? try encoder.encode(reports[0]) : try encoder.encode(reports)
            print(String(decoding: data, as: UTF8.self))
        } else {
            for report in reports {
                if let properties = report.properties {
                    print(describe(properties, path: report.path, scans: report.scans, verified: report.verified))
                }
            }
        }
        for report in reports { if let error = report.error { printError(error) } }
        if reports.contains(where: { $0.error != nil }) { throw CommandFailure(status: .failure) }
    }

    /// What `path` is and, with `verify`, whether every pixel decodes (a large plain JPEG on every core, through
    /// its entropy index in `entropyIndexFolder`).
    private static func report(for path: String, verify: Bool, budget: MemoryBudget, entropyIndexFolder: String) -> Report {
        do {
            let source = try StandardStreams.source(path, budget: budget)
            let scans: Int?
            do { scans = try source.scanCount() } catch {
                return Report(path: path, properties: source.properties, scans: nil, verified: nil, error: "\(error)")
            }
            guard verify else { return Report(path: path, properties: source.properties, scans: scans, verified: nil, error: nil) }
            do {
                try source.verify(ReadOptions(entropyIndexFolder: entropyIndexFolder))
                return Report(path: path, properties: source.properties, scans: scans, verified: true, error: nil)
            } catch {
                return Report(path: path, properties: source.properties, scans: scans, verified: false, error: "\(error)")
            }
        } catch {
            return Report(path: path, properties: nil, scans: nil, verified: nil, error: "\(error)")
        }
    }

    private static func describe(_ properties: ImageProperties, path: String, scans: Int?, verified: Bool?) -> String {
        var kind = properties.format.displayName
        if let descriptor = properties.zippedDescriptor { kind += ", in a zip (\(descriptor))" }
        if properties.isProgressive { kind += properties.format == .jpeg ? ", progressive" : ", interlaced" }
        let model: String
        switch properties.colorModel {
        case .gray: model = "gray"
        case .rgb: model = "RGB"
        case .cmyk: model = "CMYK"
        case .ycck: model = "YCCK"
        case .palette: model = "palette"
        }
        var lines = [
            path,
            "  format       \(kind)",
            "  size         \(properties.width) x \(properties.height) pixels"
                + " (\((Double(properties.width * properties.height) / 1e6).fixed(1)) MP)",
            "  pixels       \(model)\(properties.hasAlpha ? " + alpha" : ""), \(properties.channels) channel"
                + "\(properties.channels == 1 ? "" : "s"), \(properties.bitDepth)-bit",
            "  orientation  \(properties.orientation)",
            "  ICC profile  \(properties.hasICCProfile ? "yes" : "no")",
            // A pyramid in a folder is its descriptor and a file per tile: the size is the descriptor's alone.
            (properties.tileSize != nil && properties.zippedDescriptor == nil ? "  descriptor   " : "  file size    ")
                + "\(ByteCount(properties.fileSize))"
                + (properties.fileSize < 1024 ? "" : " (\(properties.fileSize.grouped) bytes)"),
        ]
        if let scans { lines.insert("  scans        \(scans)", at: 2) }
        if properties.pageCount > 1 { lines.append("  pages        \(properties.pageCount)") }
        if let tileSize = properties.tileSize { lines.append("  tiles        \(tileSize)") }
        if properties.levels.count > 1 {
            lines.append("  levels       " + properties.levels.map(\.description).joined(separator: ", "))
        }
        if let codestream = properties.jpeg2000 { lines += describe(codestream) }
        if let verified { lines.append("  verified     \(verified ? "ok, every pixel decodes" : "FAILED")") }
        return lines.joined(separator: "\n")
    }

    /// A JPEG 2000 file's structure: container, components, progression, layers, wavelet, tiles, code-blocks.
    private static func describe(_ codestream: JPEG2000Structure) -> [String] {
        let sign = codestream.isSigned ? "signed " : ""
        let wavelet = codestream.isReversible ? "5/3 (lossless)" : "9/7 (lossy)"
        let tiles = codestream.isTiled
            ? "\(codestream.tileSize) (\(codestream.tileColumns) x \(codestream.tileRows))" : "untiled"
        return [
            "  codestream   \(codestream.container)\(codestream.isHighThroughput ? ", HTJ2K" : ""),"
                + " \(codestream.components) component\(codestream.components == 1 ? "" : "s") of \(sign)"
                + "\(codestream.precision) bits, \(codestream.progressionOrder), \(codestream.layers)"
                + " layer\(codestream.layers == 1 ? "" : "s"), \(wavelet)",
            "  resolutions  \(codestream.resolutionLevels)",
            "  tiles        \(tiles)",
            "  code-blocks  \(codestream.codeBlockSize)",
            "  colour space \(codestream.colorSpace)",
        ]
    }
}
