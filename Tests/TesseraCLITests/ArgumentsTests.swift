import Testing
import Tessera
@testable import tessera

/// The parser: flags, values in every spelling, aliases, positionals, and the usage errors for what it refuses.
@Suite struct ArgumentsTests {
    private func parse(_ words: [String], _ spec: CommandSpec = ConvertCommand.spec) throws -> Arguments {
        try Arguments(words, spec: spec)
    }

    private func refusal(_ words: [String], _ spec: CommandSpec = ConvertCommand.spec) -> String? {
        do {
            _ = try Arguments(words, spec: spec)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func flagsAreOffUnlessGiven() throws {
        #expect(try parse(["a"], InfoCommand.spec)[InfoCommand.json] == false)
        #expect(try parse(["a", "--json"], InfoCommand.spec)[InfoCommand.json] == true)
        #expect(refusal(["--json=yes"], InfoCommand.spec) == "--json takes no value")
    }

    @Test func valuesAreReadSeparateInlineAndByShortAlias() throws {
        let quality = EncodingOptions.standard.quality
        #expect(try parse(["--quality", "90"])[quality] == 90)
        #expect(try parse(["--quality=91"])[quality] == 91)
        #expect(try parse(["-Q", "92"])[quality] == 92)
        #expect(try parse(["-Q", "92", "--quality", "93"])[quality] == 93)
        #expect(try parse(["--output=%s.png"], ThumbnailCommand.spec)[ThumbnailCommand.output] == "%s.png")
    }

    @Test func positionalsKeepTheirOrderAroundOptions() throws {
        let arguments = try parse(["in.png", "-Q", "80", "-", "-3.5", "--", "--quality", "-Q"])
        #expect(arguments.positionals == ["in.png", "-", "-3.5", "--quality", "-Q"])
        #expect(arguments[EncodingOptions.standard.quality] == 80)
        #expect(throws: UsageError.self) { try arguments.positionals(exactly: 2, "IN and OUT") }
        #expect(try parse(["a", "b"]).positionals(exactly: 2, "IN and OUT") == ["a", "b"])
    }

    @Test func unknownOptionsAreRefusedByName() {
        #expect(refusal(["--bogus"]) == "unknown option --bogus")
        #expect(refusal(["--bogus=1"]) == "unknown option --bogus")
        #expect(refusal(["-z"]) == "unknown option -z")
        #expect(refusal(["-Qx"]) == "unknown option -Qx")
        // An option another command has is unknown here.
        #expect(refusal(["--layout", "dz"]) == "unknown option --layout")
    }

    @Test func aMissingValueNamesItsPlaceholder() {
        #expect(refusal(["a", "--quality"]) == "--quality needs a value (N)")
        #expect(refusal(["--rect"], RegionCommand.spec) == "--rect needs a value (x,y,w,h)")
    }

    @Test func numbersOutsideTheirRangeAreRefused() {
        #expect(refusal(["-Q", "0"]) == "--quality must be a whole number from 1 to 100, not '0'")
        #expect(refusal(["-Q", "101"]) == "--quality must be a whole number from 1 to 100, not '101'")
        #expect(refusal(["-Q", "high"]) == "--quality must be a whole number from 1 to 100, not 'high'")
        #expect(refusal(["--tile-size", "24"]) == "--tile-size must be a multiple of 16 from 16 to 8192, not '24'")
        #expect(refusal(["--port", "65536"], ServeCommand.spec)
                == "--port must be a whole number from 0 to 65535, not '65536'")
    }

    @Test func choicesIgnoreCaseTakeAliasesAndListWhatTheyAccept() throws {
        #expect(try parse(["--layout", "IIIF"], TileCommand.spec)[TileCommand.layout] == .iiif)
        #expect(try parse(["--format", "jpeg"], TileCommand.spec)[TileCommand.format] == .jpeg)
        #expect(try parse(["--crop", "center"], ThumbnailCommand.spec)[ThumbnailCommand.crop] == .centre)
        #expect(try parse(["--subsampling", "444"])[EncodingOptions.subsampling] == .s444)
        #expect(try parse(["--bit-depth", "16"])[EncodingOptions.bitDepth] == 16)
        #expect(refusal(["--format", "gif"], TileCommand.spec) == "--format must be one of jpg, png, webp, jpeg, not 'gif'")
        #expect(refusal(["--compression", "zstd"])
                == "--compression must be one of none, deflate, lzw, jpeg, webp, not 'zstd'")
        #expect(refusal(["--kernel", "sinc"], ResizeCommand.spec)?.hasPrefix("--kernel must be one of nearest, ") == true)
        #expect(try parse(["--kernel", "bicubic"], ResizeCommand.spec)[ResizeCommand.kernel].name == "catmullrom")
    }

    @Test func byteSizesTakePowersOf1024() throws {
        let limit = CommonOptions.memoryLimit
        #expect(try parse(["--memory-limit", "512M"])[limit] == 512 << 20)
        #expect(try parse(["--memory-limit", "2g"])[limit] == 2 << 30)
        #expect(try parse(["--memory-limit", "1.5K"])[limit] == 1536)
        #expect(try parse(["--memory-limit", "64MiB"])[limit] == 64 << 20)
        #expect(try parse(["--memory-limit", "1TB"])[limit] == 1 << 40)
        #expect(try parse(["--memory-limit", "100"])[limit] == 100)
        for bad in ["0", "-1M", "lots", "9E"] {
            #expect(refusal(["--memory-limit", bad]) == "--memory-limit must be a size such as 512M or 2G, not '\(bad)'")
        }
        #expect(try parse(["a"]).budget.limit == MemoryBudget.default.limit)
        // A cache that 0 turns off takes 0 too, and shows it as 0.
        let responses = ServeCommand.responseCache
        #expect(try parse(["--response-cache", "0"], ServeCommand.spec)[responses] == 0)
        #expect(try parse(["--response-cache", "0K"], ServeCommand.spec)[responses] == 0)
        #expect(refusal(["--response-cache", "-1"], ServeCommand.spec)
                    == "--response-cache must be a size such as 512M or 2G, or 0, not '-1'")
        #expect(ValueKind<Int>.byteSizeOrZero.show(0) == "0" && ValueKind<Int>.byteSize.show(3 << 20) == "3M")
    }

    @Test func structuredValuesAreReadWhole() throws {
        let region = try parse(["--rect", "1, 2,3,4"], RegionCommand.spec)[RegionCommand.rect]
        #expect(region == Rect(x: 1, y: 2, width: 3, height: 4))
        #expect(refusal(["--rect", "1,2,3"], RegionCommand.spec)
                == "--rect must be x,y,w,h with x, y >= 0 and w, h > 0, not '1,2,3'")
        #expect(try parse(["--rect", " 5 ,6,\t7 , 8 "], RegionCommand.spec)[RegionCommand.rect]
                == Rect(x: 5, y: 6, width: 7, height: 8))
        #expect(refusal(["--rect", "1 0,2,3,4"], RegionCommand.spec)
                == "--rect must be x,y,w,h with x, y >= 0 and w, h > 0, not '1 0,2,3,4'")
        #expect(try parse(["--scale", "1/8"])[ReadingOptions.scale] == 8)
        #expect(try parse(["--scale", "0.25"])[ReadingOptions.scale] == 4)
        #expect(refusal(["--scale", "2/3"]) == "--scale must be 1/N for a whole number N, such as 1/2 or 1/8, not '2/3'")
        #expect(try parse(["--background", "#ff8000"])[EncodingOptions.background] == [255, 128, 0])
        #expect(refusal(["--background", "orange"]) == "--background must be a colour as RRGGBB, not 'orange'")
        let resize = try parse(["--scale", "0.5,0.25", "--size", "30x20"], ResizeCommand.spec)
        #expect(resize[ResizeCommand.scale]?.x == 0.5 && resize[ResizeCommand.scale]?.y == 0.25)
        #expect(resize[ResizeCommand.size] == Size(width: 30, height: 20))
        #expect(try parse(["-s", "200x100!"], ThumbnailCommand.spec)[ThumbnailCommand.size].description == "200x100!")
        #expect(refusal(["--size", "32x32"], ViewCommand.spec) == "--size must be WxH with sides from 64 to 16384, not '32x32'")
        #expect(refusal(["--prefix", "iiif/"], ServeCommand.spec)
                == "--prefix must start with / and not end with one, not 'iiif/'")
    }

    @Test func requiredOptionsAreCheckedUnlessHelpIsAsked() throws {
        #expect(refusal(["a", "b"], RegionCommand.spec) == "--rect x,y,w,h is required")
        #expect(try parse(["--help"], RegionCommand.spec)[CommonOptions.help])
    }

    @Test func viewRefusesItsOldCacheNamesWithTheNewOnes() {
        #expect(refusal(["x.png", "--pyramid-cache", "/tmp"], ViewCommand.spec) == "--pyramid-cache is now --cache")
        #expect(refusal(["x.png", "--no-pyramid-cache"], ViewCommand.spec) == "--no-pyramid-cache is now --no-cache")
    }

    @Test func viewAndServeShareThePyramidCacheOptions() throws {
        for spec in [ViewCommand.spec, ServeCommand.spec] {
            let arguments = try parse(["x", "--cache", "/tmp/c", "--cache-size", "1G", "--no-cache"], spec)
            #expect(arguments[PyramidCacheOptions.folder] == "/tmp/c")
            #expect(arguments[PyramidCacheOptions.size] == 1 << 30)
            #expect(arguments[PyramidCacheOptions.off])
        }
        let serve = try parse(["x", "--response-cache", "32M"], ServeCommand.spec)
        #expect(serve[ServeCommand.responseCache] == 32 << 20)
        let view = try parse(["x", "--memory-cache", "64M"], ViewCommand.spec)
        #expect(view[ViewCommand.memoryCache] == 64 << 20)
        #expect(view[PyramidCacheOptions.size] == 8 << 30)
    }
}

/// The value kinds on their own: what each reads, refuses and shows.
@Suite struct ValueKindTests {
    @Test func anOptionalKindStillRefusesWhatItsValueKindRefuses() {
        let kind = ValueKind.integer(in: 1...10).optional
        #expect(kind.read("11") == nil)
        #expect(kind.read("5") == .some(5))
        #expect(kind.show(nil) == nil && kind.show(5) == "5")
    }

    @Test func byteSizesShowInTheLargestWholeUnit() {
        let kind = ValueKind<Int>.byteSize
        #expect(kind.show(1 << 30) == "1G" && kind.show(256 << 20) == "256M" && kind.show(8 << 30) == "8G")
        #expect(kind.show(1536) == "1536" && kind.show(3 << 10) == "3K")
    }

    @Test func choicesShowTheirFirstName() {
        let kind = ValueKind<TileFormat>.choice([("jpg", .jpeg), ("png", .png)], aliases: [("jpeg", .jpeg)])
        #expect(kind.placeholder == "jpg|png" && kind.accepted == nil)
        #expect(kind.show(.jpeg) == "jpg" && kind.show(.webp) == nil)
        let long = ValueKind<EncodeOptions.TIFFCompression>.choice
        #expect(long.placeholder == "NAME" && long.accepted == "none, deflate, lzw, jpeg or webp")
    }
}
