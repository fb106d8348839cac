import CZlib
import Foundation
import Tessera
import TesseraServer
import TesseraViewer

/// One parser Tessera owns, fed arbitrary bytes: it may throw (bad input is expected to give a `TesseraError` or
/// another typed error), but it must not trap, hang, leak or allocate past the limits the fuzzer sets.
struct FuzzTarget: Sendable {
    let name: String
    /// What the target reaches, for `--list`.
    let summary: String
    let run: @Sendable ([UInt8]) throws -> Void

    /// Every target, by name.
    static let all: [FuzzTarget] = [image, incremental, deepZoomDescriptor, iiifInfo, iiifRequest, http, viewerScript,
                                    zip, entropyIndex, remoteFile]

    /// Images larger than this are only opened (header, properties), not decoded: a tiny file claiming a large
    /// image would otherwise spend the fuzzer's time on filler rather than on parsing.
    static let decodedPixels = 1 << 20

    /// Every format through `ImageSource`: detection, properties, then whole, 1/8-scale and region reads, once with
    /// the default budget and once with a tiny one (which sends progressive JPEGs through the banded decoder); a
    /// JPEG's planes as a planar render reads them (`planes`); and a pyramid's stored JPEG tiles as a server answers
    /// them (`storedTiles`).
    static let image = FuzzTarget(name: "image", summary: "each codec's header and data path through ImageSource") { bytes in
        for budget in [MemoryBudget(limit: 64 << 20), MemoryBudget(limit: 64 << 10)] {
            let source = try ImageSource(bytes: bytes, name: "fuzz", budget: budget)
            let size = source.properties.size
            guard size.width * size.height <= decodedPixels else { return }
            let region = Rect(x: size.width / 3, y: size.height / 3, width: max(1, size.width / 3),
                              height: max(1, size.height / 3))
            for options in [ReadOptions(), ReadOptions(scale: 8), ReadOptions(region: region, scale: 2),
                            ReadOptions(allowPartial: true)] {
                _ = try? source.makeReader(options).readAll(budget: budget, name: "fuzz")
            }
            if source.properties.format == .jpeg { try? planes(of: bytes, budget: budget) }
        }
        try storedTiles(of: ImageSource(bytes: bytes, name: "fuzz"))
    }

    /// A JPEG's YCbCr planes (`JPEGPlanes`) as a server's planar render reads them: whole, at 1/2 with only the
    /// top rows decoded, and its last eighth of columns alone (decoded cut to them); each resampled to two thirds
    /// of its size with the last column repeated, and encoded.
    static func planes(of jpeg: [UInt8], budget: MemoryBudget) throws {
        func decode(scale: Int, rows: Int? = nil, columns: Range<Int>? = nil) throws -> JPEGPlanes? {
            try JPEGPlanes(decoding: .bytes(jpeg, name: "fuzz"), scale: scale, rows: rows, columns: columns, budget: budget)
        }
        func render(_ planes: JPEGPlanes, region: Rect) throws {
            _ = try planes.resampled(region: region, extent: Size(width: region.width + 1, height: region.height),
                                     to: Size(width: max(1, region.width * 2 / 3), height: max(1, region.height * 2 / 3)),
                                     subsampling: .s420, kernel: .lanczos3)
                .encoded(options: EncodeOptions(), name: "fuzz")
        }
        guard let whole = try decode(scale: 1) else { return }
        try render(whole, region: Rect(whole.size))
        if let top = try decode(scale: 2, rows: 20) { try render(top, region: Rect(top.size)) }
        let width = whole.size.width, sliver = width * 7 / 8..<width
        if let cut = try decode(scale: 1, columns: sliver) {
            try render(cut, region: Rect(x: sliver.lowerBound, y: 0, width: sliver.count, height: cut.size.height))
        }
    }

    /// Each level's first and last stored JPEG tile of a pyramid (a pyramidal TIFF's), asked for at sizes up to
    /// two pixels either side of its real pixels, as viewers ask for edge tiles: cut or stretched in its
    /// coefficients (`JPEGCoefficientCrop`: the header relabelled, Tessera's entropy splice, or libjpeg's
    /// transcoding). Whatever comes back that is not the stored tile as it is must be a JPEG of the size asked for.
    static func storedTiles(of source: ImageSource) throws {
        guard let tiles = try source.storedJPEGTiles() else { return }
        var scale = 1
        while let level = tiles.storedLevelSize(scale: scale), level.width * level.height <= decodedPixels {
            let last = ((level.width - 1) / tiles.tileSize, (level.height - 1) / tiles.tileSize)
            for (column, row) in [(0, 0), last] {
                guard let (jpeg, content) = try? tiles.storedJPEG(scale: scale, column: column, row: row) else { continue }
                try? planes(of: jpeg, budget: MemoryBudget(limit: 64 << 20))
                for width in content.width - 2...content.width + 2 {
                    for height in content.height - 2...content.height + 2 {
                        let asked = Size(width: width, height: height)
                        guard let answer = try? tiles.jpeg(scale: scale, column: column, row: row, size: asked),
                              asked != Size(width: tiles.tileSize, height: tiles.tileSize) || content != asked,
                              let answered = try? ImageSource(bytes: answer, name: "fuzz")
                        else { continue }
                        precondition(answered.properties.size == asked,
                                     "a stored tile asked for at \(asked) came back \(answered.properties.size)")
                        _ = try? answered.makeReader().readAll(name: "fuzz")
                    }
                }
            }
            scale *= 2
        }
    }

    /// `IncrementalImageSource` fed the bytes in chunks whose sizes come from the first byte (at most 64 chunks:
    /// each asks for an image, which re-decodes what has arrived), asking for an image after every chunk. As in
    /// `image`, an image whose header says it is over `decodedPixels` is not decoded: the formats decoded whole
    /// decode it at the first update.
    static let incremental = FuzzTarget(name: "incremental", summary: "the incremental decoders fed in chunks") { bytes in
        guard let first = bytes.first else { return }
        let data = Array(bytes.dropFirst())
        if let whole = try? ImageSource(bytes: data, name: "fuzz"),
           whole.properties.size.width * whole.properties.size.height > decodedPixels { return }
        let chunk = max(1 + Int(first) * 7, (data.count + 63) / 64)
        let source = IncrementalImageSource(name: "fuzz", budget: MemoryBudget(limit: 64 << 20))
        var end = 0
        repeat {
            end = min(data.count, end + chunk)
            source.update(data: data[..<end], isFinal: end == data.count)
            if let properties = source.properties, properties.width * properties.height > decodedPixels { return }
            _ = try? source.makeImage(maxPixelSize: 64)
        } while end < data.count
    }

    static let deepZoomDescriptor = FuzzTarget(name: "dzi", summary: "Deep Zoom .dzi descriptors (XML)") { bytes in
        _ = try DeepZoomLayout.Descriptor(xml: bytes, path: "fuzz.dzi")
    }

    static let iiifInfo = FuzzTarget(name: "iiif-info", summary: "IIIF level-0 info.json descriptors") { bytes in
        _ = try IIIFLayout.Info(json: bytes, path: "fuzz/info.json")
    }

    /// The four parameters of an image request, split at `/`, parsed and resolved against a 12000 x 8333 image
    /// within the server's default limits.
    static let iiifRequest = FuzzTarget(name: "iiif-request", summary: "IIIF image request parameters") { bytes in
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: "/", omittingEmptySubsequences: false)
            .map(String.init)
        guard parts.count >= 4 else { return }
        let request = try IIIFRequest(region: parts[0], size: parts[1], rotation: parts[2], qualityAndFormat: parts[3])
        _ = try request.resolve(for: Size(width: 12000, height: 8333), limits: IIIFService.Configuration().limits)
    }

    /// A request through the whole site (routing, the catalog, IIIF, the front page, the viewer's files) over a
    /// folder with one small image: the first line is the method and path, the rest `name: value` headers.
    static let http = FuzzTarget(name: "http", summary: "HTTP requests through the site: routes, catalog, IIIF, pages") { bytes in
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines.first?.split(separator: " ", maxSplits: 1).map(String.init) ?? []
        guard first.count == 2 else { return }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let pair = line.split(separator: ":", maxSplits: 1)
            if pair.count == 2 { headers[pair[0].lowercased()] = pair[1].trimmingCharacters(in: .whitespaces) }
        }
        _ = try FuzzSite.shared().handle(HTTPRequest(method: first[0], path: first[1], headers: headers))
    }

    static let viewerScript = FuzzTarget(name: "viewer-script", summary: "tessera view's --script JSON") { bytes in
        _ = try ViewerScript(json: bytes, name: "fuzz.json")
    }

    /// Zips: the bytes read as the pyramid a zip may hold (`ZipArchive`, `TileFolderPyramid`), then as the partial
    /// zip a killed build leaves, which `--resume` reads the complete entries of (then adds one and commits), and
    /// as a finished zip whose end record holds the build key.
    static let zip = FuzzTarget(name: "zip", summary: "zips: read as a pyramid, a partial one resumed, a finished one's key") {
        bytes in
        let folder = try FuzzScratch.shared().folder
        let path = folder + "/pyramid.zip", partial = folder + "/.pyramid.zip.tessera-partial"
        let key = BuildKey(source: "fuzz", options: [])
        for file in [path, partial] { try Data(bytes).write(to: URL(fileURLWithPath: file)) }
        // Read back as the pyramid it may hold: properties, a read at 1/2, and its stored tiles as a server sends them.
        if let source = try? ImageSource(path: path), source.properties.width * source.properties.height <= decodedPixels {
            _ = try? source.makeReader(ReadOptions(scale: 2)).readAll(budget: .default, name: "fuzz")
            try? storedTiles(of: source)
        }
        try Data(key.description.utf8).write(to: URL(fileURLWithPath: partial + ".key"))
        _ = CompletionRecord.zip(path).isComplete(for: key)
        let container = try ZipContainer(path: path, partial: .resume, buildKey: key.description)
        if !container.hasCompleteFile(at: "0/0_0.jpg") { try container.write([1, 2, 3], to: "0/0_0.jpg") }
        try container.commit()
        _ = CompletionRecord.zip(path).isComplete(for: key)
    }

    /// An entropy index file for a fixed JPEG, read and then used for a region read: the input is XORed onto the
    /// genuine index after its magic, version and key (bytes past its end are appended), and the checksum is made
    /// to match, so that mutations reach the parser's checks and the decoder's resumption from saved states.
    static let entropyIndex = FuzzTarget(name: "entropy-index", summary: "JPEG entropy index files, then a region read through them") { bytes in
        let files = try FuzzScratch.shared()
        let header = 4 + 2 + 8 + 8, genuine = files.index.dropLast(4)
        var body = Array(genuine.dropFirst(header))
        for (offset, byte) in bytes.enumerated() {
            if offset < body.count { body[offset] ^= byte } else { body.append(byte) }
        }
        var file = Array(genuine.prefix(header)) + body
        let crc = file.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        file += (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
        let index = try JPEGEntropyIndex(decoding: file, name: "fuzz.jpegindex")
        let location = JPEGEntropyIndex.location(of: files.jpeg, key: index.key, folder: files.indexFolder)
        try Data(file).write(to: URL(fileURLWithPath: location))
        let source = try ImageSource(path: files.jpeg)
        for region in [Rect(x: 120, y: 80, width: 40, height: 30), Rect(x: 0, y: 100, width: 17, height: 36)] {
            _ = try source.makeReader(ReadOptions(region: region, entropyIndexFolder: files.indexFolder)).readAll(name: "fuzz")
        }
    }

    /// A file read by byte ranges (`RemoteFile`, as a remote pyramid is) from a web server the input scripts
    /// (`FuzzServer`): the first byte picks the total the server claims (the file's, a little more or less, or
    /// far more, up to `Int.max`), the next 64 are the file, then eight reads of four bytes (where, from the start
    /// or back from the claimed end, how much, how far ahead), then the server's answers, two bytes each.
    static let remoteFile = FuzzTarget(name: "remote-file", summary: "byte-range reads from a web server that may lie") { bytes in
        guard let first = bytes.first else { return }
        let content = Array(bytes.dropFirst().prefix(64))
        let claims = [content.count, content.count + 1, content.count - 1, content.count + 1000, 1 << 40, 1 << 62,
                      Int.max - 15, Int.max]
        let reads = Array(bytes.dropFirst(1 + content.count).prefix(32))
        let server = FuzzServer(content: content, claimedTotal: claims[Int(first) % claims.count],
                                script: Array(bytes.dropFirst(1 + content.count + reads.count)))
        let file = try RemoteFile(url: "http://fuzz.invalid/file", fetcher: server, cache: BlockCache(budget: 1 << 16),
                                  blockSize: 16, budget: MemoryBudget(limit: 1 << 16))
        for read in stride(from: 0, to: reads.count - 3, by: 4) {
            let position = Int(reads[read]), fromEnd = reads[read + 3] & 1 == 1
            _ = try? file.read(at: fromEnd ? file.byteCount - 1 - position : position, count: Int(reads[read + 1]),
                               readAhead: Int(reads[read + 2]) * 16)
        }
    }
}
