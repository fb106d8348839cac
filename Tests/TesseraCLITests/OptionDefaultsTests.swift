import Foundation
import Testing
import Tessera
import TesseraViewer
@testable import tessera

/// Defaults: each written once, in its declaration, read by the command and shown by its help alike.
@Suite struct OptionDefaultsTests {
    static let specs = [InfoCommand.spec, ConvertCommand.spec, RegionCommand.spec, ResizeCommand.spec,
                        ThumbnailCommand.spec, TileCommand.spec, IndexCommand.spec, ServeCommand.spec, ViewCommand.spec]

    @Test func tileAndConvertEachHaveTheirOwnQualityInHelpAndInUse() throws {
        let tile = try Arguments(["in", "out"], spec: TileCommand.spec)
        let convert = try Arguments(["in", "out"], spec: ConvertCommand.spec)
        #expect(TileCommand.encoding.read(tile).quality == 75)
        #expect(EncodingOptions.standard.read(convert).quality == EncodeOptions().quality)
        #expect(TileCommand.spec.help.contains("JPEG, WebP and JPEG 2000 quality (1-100; default 75)"))
        #expect(ConvertCommand.spec.help.contains("JPEG, WebP and JPEG 2000 quality (1-100; default \(EncodeOptions().quality))"))
    }

    @Test func tileDefaultsFollowTheLayout() throws {
        func tile(_ layout: String) throws -> Arguments { try Arguments(["--layout", layout], spec: TileCommand.spec) }
        #expect(try tile("dz")[TileCommand.tileSize] == DeepZoomLayout.defaultTileSize)
        #expect(try tile("iiif")[TileCommand.tileSize] == IIIFLayout.defaultTileSize)
        #expect(try tile("zoomify")[TileCommand.tileSize] == ZoomifyLayout.defaultTileSize)
        #expect(try tile("dz")[TileCommand.overlap] == DeepZoomLayout.defaultOverlap)
        #expect(try tile("xyz")[TileCommand.overlap] == 0)
        #expect(try tile("dz")[TileCommand.depth] == .onePixel)
        #expect(try tile("grid")[TileCommand.depth] == .one)
        #expect(try tile("tiff")[TileCommand.depth] == .oneTile)
        #expect(try Arguments([], spec: TileCommand.spec)[TileCommand.layout] == .dz)
        let help = TileCommand.spec.help
        #expect(help.contains("default: dz 254, iiif 512, others 256"))
        #expect(help.contains("default: dz 1, others 0"))
        #expect(help.contains("default: dz onepixel, grid one, others onetile"))
        let iiif = try Arguments(["in.png", "/tmp/out/pic"], spec: TileCommand.spec)
        #expect(iiif[TileCommand.id] == "http://localhost:\(ServeCommand.defaultPort)/%s")
    }

    @Test func theLibrarysDefaultsAreTheOptionsDefaults() throws {
        let view = try Arguments(["x"], spec: ViewCommand.spec)
        #expect(view[ViewCommand.memoryCache] == Viewer.Configuration().cacheBytes)
        #expect(view[ViewCommand.size] == Viewer.Configuration().windowSize)
        let convert = try Arguments(["a", "b"], spec: ConvertCommand.spec)
        let encoding = EncodingOptions.standard.read(convert)
        let library = EncodeOptions()
        #expect(encoding.compressionLevel == library.compressionLevel && encoding.subsampling == library.subsampling)
        #expect(encoding.background == library.background && encoding.tiffCompression == library.tiffCompression)
        #expect(encoding.bitDepth == nil && !encoding.tiled)
        #expect(ReadingOptions.read(convert).scale == 1 && ReadingOptions.read(convert).page == 0)
    }

    @Test func anOptionDeclaredOtherwiseReadsAsItsDefault() throws {
        // tile's --tile-size is its tiles' side, not the TIFF strip-or-tile layout of EncodingOptions.
        let tile = try Arguments(["--tile-size", "512"], spec: TileCommand.spec)
        #expect(tile[TileCommand.tileSize] == 512)
        #expect(tile[EncodingOptions.tiffTileSize] == nil && !TileCommand.encoding.read(tile).tiled)
        // tile declares no --scale.
        #expect(ReadingOptions.read(tile).scale == 1)
        let convert = try Arguments(["--tile-size", "512"], spec: ConvertCommand.spec)
        #expect(EncodingOptions.standard.read(convert).tiled && EncodingOptions.standard.read(convert).tileSize == 512)
    }

    @Test func helpShowsEveryDefaultAndAcceptedRange() {
        let convert = ConvertCommand.spec.help
        #expect(convert.hasPrefix("usage: tessera convert IN OUT"))
        for line in ["--level N", "(0-9; default 6)", "--subsampling 444|420", "(default 420)", "(default ffffff)",
                     "(default: the input's)", "(none, deflate, lzw, jpeg or webp; default deflate)", "(default 1G)",
                     "-h, --help", "--stats"] {
            #expect(convert.contains(line), "\(line)")
        }
        #expect(ServeCommand.spec.help.contains("(0-65535; default 8000)"))
        #expect(ServeCommand.spec.help.contains("(default 8G)"))
        #expect(ViewCommand.spec.help.contains("(default 256M)"))
        #expect(ViewCommand.spec.help.contains("(default 1024x768)"))
        #expect(RegionCommand.spec.help.contains("in pixels (required)"))
        #expect(ThumbnailCommand.spec.help.contains("(default tn_%s.jpg)"))
    }

    @Test func everyCommandDeclaresEachNameOnce() {
        for spec in Self.specs {
            let names = spec.allOptions.map(\.name)
            #expect(Set(names).count == names.count, "\(spec.name): \(names)")
            let shorts = spec.allOptions.compactMap(\.short)
            #expect(Set(shorts).count == shorts.count, "\(spec.name)")
            #expect(spec.renamed.keys.allSatisfy { !names.contains($0) })
            #expect(spec.help.hasPrefix("usage: tessera \(spec.name)"))
        }
    }

    @Test func theBlockCacheOptionsSetUpTheSharedCache() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blocks-\(UInt64.random(in: 0...UInt64.max))").path
        defer {
            BlockCache.share(BlockCache(budget: BlockCache.defaultBudget))
            try? FileManager.default.removeItem(atPath: folder)
        }
        let plain = try Arguments(["a"], spec: InfoCommand.spec)
        #expect(plain[RemoteOptions.memory] == BlockCache.defaultBudget && plain[RemoteOptions.folder] == nil)
        #expect(plain[RemoteOptions.folderSize] == BlockFolder.defaultLimit)
        let given = try Arguments(["--block-cache", "64M", "--block-cache-folder", folder, "--block-cache-folder-size", "1G"],
                                  spec: ServeCommand.spec)
        try RemoteOptions.install(given)
        #expect(BlockCache.shared.budget == 64 << 20)
        #expect(BlockCache.shared.folder?.path == folder && BlockCache.shared.folder?.limit == 1 << 30)
        #expect(FileManager.default.fileExists(atPath: folder))
    }

    @Test func threadsDefaultToTheCoresEverywhere() throws {
        for (spec, option) in [(TileCommand.spec, TileCommand.threads), (ThumbnailCommand.spec, ThumbnailCommand.threads),
                               (ViewCommand.spec, ViewCommand.threads), (ServeCommand.spec, ServeCommand.threads)] {
            #expect(try Arguments([], spec: spec)[option] >= 1)
            #expect(try Arguments(["--threads", "3"], spec: spec)[option] == 3)
            #expect(spec.help.contains("per core)"))
        }
        #expect(throws: UsageError.self) { try Arguments(["--threads", "0"], spec: TileCommand.spec) }
    }
}
