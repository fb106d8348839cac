import Foundation
import Testing
@testable import Tessera

/// Deep Zoom and IIIF level-0 folders read back as images through their descriptors.
@Suite struct TileFolderTests {
    @Test func aPyramidInAZipReadsBackAsTheImage() throws {
        let image = TestImages.make(width: 301, height: 203, format: .rgb8)
        for layout in ["dz", "iiif"] {
            let path = try TestImages.pyramid(image, layout: layout, tileSize: 64, zipped: true)
            let source = try ImageSource(path: path)
            #expect(source.properties.format == (layout == "dz" ? .deepZoom : .iiif))
            #expect(source.properties.size == image.size)
            #expect(source.properties.zippedDescriptor == (layout == "dz" ? "pyramid.dzi" : "pyramid/info.json"))
            #expect(TestImages.maxDifference(try source.makeReader().readAll(), image) == 0, "\(layout)")
            let rect = Rect(x: 60, y: 61, width: 130, height: 70)
            #expect(TestImages.maxDifference(try source.makeReader(ReadOptions(region: rect)).readAll(),
                                             TestImages.crop(image, rect)) == 0, "\(layout)")
        }
    }

    @Test func storedJPEGTilesInAZipAreItsEntries() throws {
        let image = TestImages.make(width: 200, height: 130, format: .rgb8)
        let path = try TestImages.pyramid(image, layout: "iiif", tileSize: 64, format: .jpeg, zipped: true)
        let tiles = try #require(try ImageSource(path: path).storedJPEGTiles())
        let archive = try ZipArchive(input: .file(path: path), budget: .default)
        #expect(try tiles.jpeg(scale: 1, column: 1, row: 0, size: Size(width: 64, height: 64))
                == archive.data(of: "pyramid/64,0,64,64/64,64/0/default.jpg"))
        #expect(try tiles.jpeg(scale: 1, column: 3, row: 0, size: Size(width: 8, height: 64))
                == archive.data(of: "pyramid/192,0,8,64/8,64/0/default.jpg"))
    }

    /// A zip read as an image holds one pyramid, found nearest its top (macOS's resource forks beside it left out);
    /// a zip of none, or of two side by side, is refused, naming the zip.
    @Test func aZipHoldsOnePyramid() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = TestImages.make(width: 90, height: 60, format: .rgb8)
        let inner = try TestImages.pyramid(image, layout: "dz", tileSize: 64)
        let descriptor = Array(try Data(contentsOf: URL(fileURLWithPath: inner)))
        func zip(_ name: String, _ files: [(String, [UInt8])]) throws -> String {
            let path = "\(folder)/\(name).zip"
            let container = try ZipContainer(path: path, partial: .discard, buildKey: "k")
            for (file, bytes) in files { try container.write(bytes, to: file) }
            try container.commit()
            return path
        }
        let tile = Array(try Data(contentsOf: URL(fileURLWithPath: (inner as NSString).deletingLastPathComponent
                                                      + "/pyramid_files/0/0_0.png")))
        let nested = try zip("nested", [("a/b/other.dzi", descriptor), ("a/pyramid.dzi", descriptor),
                                        ("a/pyramid_files/0/0_0.png", tile), ("__MACOSX/a/._pyramid.dzi", [0, 5, 22, 7]),
                                        ("a/._pyramid.dzi", [0, 5, 22, 7])])
        #expect(try ImageSource(path: nested).properties.size == image.size, "the descriptor nearest the top")
        let none = try zip("none", [("readme.txt", Array("hello".utf8))])
        #expect(throws: TesseraError.unsupported(path: none, feature: "a zip that holds no Deep Zoom .dzi or IIIF "
                                                     + "info.json pyramid")) { try ImageSource(path: none) }
        let two = try zip("two", [("b.dzi", descriptor), ("a.dzi", descriptor)])
        #expect(throws: TesseraError.unsupported(path: two, feature: "a zip of 2 pyramids (a.dzi, b.dzi): one is read "
                                                     + "per zip")) { try ImageSource(path: two) }
    }

    @Test func aPyramidReadsBackAsTheImageItWasCutFrom() throws {
        let image = TestImages.make(width: 301, height: 203, format: .rgb8)
        for (layout, overlap) in [("dz", 1), ("dz", 0), ("iiif", 0)] {
            let source = try ImageSource(path: try TestImages.pyramid(image, layout: layout, tileSize: 64, overlap: overlap))
            #expect(source.properties.format == (layout == "dz" ? .deepZoom : .iiif))
            #expect(source.properties.size == image.size)
            #expect(source.properties.zippedDescriptor == nil)
            #expect(source.properties.levels.prefix(3) == [Size(width: 301, height: 203), Size(width: 151, height: 102),
                                                           Size(width: 76, height: 51)])
            let whole = try source.makeReader().readAll()
            #expect(TestImages.maxDifference(whole, image) == 0, "\(layout), overlap \(overlap)")
            let rect = Rect(x: 60, y: 61, width: 130, height: 70)
            let region = try source.makeReader(ReadOptions(region: rect)).readAll()
            #expect(TestImages.maxDifference(region, TestImages.crop(image, rect)) == 0, "\(layout), overlap \(overlap)")
        }
    }

    @Test func reducedReadsComeFromTheLevels() throws {
        let image = TestImages.make(width: 300, height: 200, format: .rgb8, smooth: true)
        let source = try ImageSource(path: try TestImages.pyramid(image, layout: "dz", tileSize: 32, overlap: 1))
        for scale in [2, 4, 16] {
            let level = try source.makeReader(ReadOptions(scale: scale)).readAll()
            let expected = try BoxShrinkReader(source: BufferReader(image), factor: scale).readAll()
            #expect(level.size == expected.size)
            #expect(TestImages.maxDifference(level, expected) <= 2, "scale 1/\(scale)")
        }
    }

    @Test func blankTilesLeftOutReadAsWhite() throws {
        var image = ImageBuffer(width: 128, height: 64, format: .rgb8)
        for index in image.bytes.indices { image.bytes[index] = index % 384 < 192 ? 255 : 10 }
        for y in 0..<64 { for x in 0..<64 { for c in 0..<3 { image.bytes[(y * 128 + x) * 3 + c] = 255 } } }
        let path = try TestImages.pyramid(image, layout: "dz", tileSize: 64, skipBlank: true)
        #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent
                                                   + "/pyramid_files/7/0_0.png"))
        #expect(TestImages.maxDifference(try ImageSource(path: path).makeReader().readAll(), image) == 0)
    }

    @Test func storedJPEGTilesAreThoseOfSquareTilesWithoutOverlap() throws {
        let image = TestImages.make(width: 200, height: 130, format: .rgb8)
        let withOverlap = try ImageSource(path: try TestImages.pyramid(image, layout: "dz", tileSize: 64, overlap: 1))
        #expect(try withOverlap.storedJPEGTiles() == nil)
        let lossless = try ImageSource(path: try TestImages.pyramid(image, layout: "iiif", tileSize: 64))
        #expect(try lossless.storedJPEGTiles() == nil, "PNG tiles are not JPEG answers")
        for layout in ["dz", "iiif"] {
            let path = try TestImages.pyramid(image, layout: layout, tileSize: 64, format: .jpeg)
            let tiles = try #require(try ImageSource(path: path).storedJPEGTiles())
            let folder = (path as NSString).deletingLastPathComponent
            let file = layout == "dz" ? folder + "/pyramid_files/8/1_0.jpeg" : folder + "/64,0,64,64/64,64/0/default.jpg"
            let stored = try tiles.jpeg(scale: 1, column: 1, row: 0, size: Size(width: 64, height: 64))
            #expect(stored == Array(try Data(contentsOf: URL(fileURLWithPath: file))), "\(layout)")
            let edgeFile = layout == "dz" ? folder + "/pyramid_files/8/3_0.jpeg" : folder + "/192,0,8,64/8,64/0/default.jpg"
            let edge = try tiles.jpeg(scale: 1, column: 3, row: 0, size: Size(width: 8, height: 64))
            #expect(edge == Array(try Data(contentsOf: URL(fileURLWithPath: edgeFile))), "edge tiles are stored at their size")
            #expect(try tiles.jpeg(scale: 1, column: 4, row: 0, size: Size(width: 8, height: 64)) == nil, "past the image")
        }
    }

    @Test func brokenDescriptorsAreTypedErrors() throws {
        let folder = try TestImages.folder()
        let cases = [
            "no-size.dzi": "<?xml version=\"1.0\"?><Image xmlns=\"http://schemas.microsoft.com/deepzoom/2008\" TileSize=\"256\"/>",
            "huge-tile.dzi": "<Image xmlns=\"http://schemas.microsoft.com/deepzoom/2008\" TileSize=\"99999999\" Overlap=\"0\" Format=\"jpg\"><Size Width=\"10\" Height=\"10\"/></Image>",
            "no-tiles.dzi": "<Image xmlns=\"http://schemas.microsoft.com/deepzoom/2008\" TileSize=\"256\" Overlap=\"0\" Format=\"jpg\"><Size Width=\"10\" Height=\"10\"/></Image>",
            "info.json": "{\"@context\": \"http://iiif.io/api/image/3/context.json\", \"width\": -4}",
            "unclosed.dzi": "<Image xmlns=\"http://schemas.microsoft.com/deepzoom/2008\" TileSize=\"256\"><Size Width=\"10\" Height=\"10\">",
        ]
        for (name, text) in cases {
            let path = "\(folder)/\(name)"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: TesseraError.self, "\(name)") { try ImageSource(path: path) }
        }
    }

    @Test func deepZoomDescriptorsAreReadAsXML() throws {
        let written = DeepZoomLayout.Descriptor(imageSize: Size(width: 4000, height: 3000), tileSize: 254, overlap: 1,
                                                format: "jpeg")
        #expect(try DeepZoomLayout.Descriptor(xml: written.xml, path: "a.dzi") == written)
        // Attributes in any order, a namespace prefix, comments, and other elements with a Width before the Size:
        // what a search for `Width="` would take for the image's.
        let other = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- Width="1" -->
            <dz:Image xmlns:dz="http://schemas.microsoft.com/deepzoom/2008" TileSize="256" Format="png" Overlap="0">
              <dz:DisplayRects><dz:DisplayRect MinLevel="1" MaxLevel="9"><dz:Rect X="0" Y="0" Width="5" Height="6"/>
              </dz:DisplayRect></dz:DisplayRects>
              <dz:Size Height="700" Width="900"/>
            </dz:Image>
            """
        #expect(try DeepZoomLayout.Descriptor(xml: Array(other.utf8), path: "b.dzi")
                == DeepZoomLayout.Descriptor(imageSize: Size(width: 900, height: 700), tileSize: 256, overlap: 0, format: "png"))
    }
}
