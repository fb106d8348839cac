import Foundation
import Synchronization
import Tessera
import TesseraServer

/// The site the `http` target requests from: a folder in `FuzzScratch.root` holding one 64 x 48 JPEG, one
/// subfolder and, when the repository is found (beside the viewer's files, from its `Web/`), the image seed
/// corpus's pyramidal TIFF (`p.tif`: 40 x 30, libvips' levels halved rounding down, 16-pixel JPEG tiles), whose
/// edge tiles, thumbnails and slivers take the server's stored-tile and one-tile paths; answers of at most 1 MP,
/// made once per process.
enum FuzzSite {
    private static let site = Mutex<Site?>(nil)

    static func shared() throws -> Site {
        try site.withLock { site in
            if let site { return site }
            let folder = FuzzScratch.root + "/site"
            try FileManager.default.createDirectory(atPath: folder + "/maps", withIntermediateDirectories: true)
            try ImageWriter.write(BufferReader(ImageBuffer(width: 64, height: 48, format: .rgb8)), to: folder + "/a.jpg")
            let webFolder = ViewerAssets.locate(from: CommandLine.arguments[0])
            if let repository = webFolder.map({ ($0 as NSString).deletingLastPathComponent }) {
                try? FileManager.default.copyItem(atPath: repository + "/Tests/Fuzz/corpus/image/pyramid.tif",
                                                  toPath: folder + "/p.tif")
            }
            // Answers of at most 1 MP: within the default 25 MP a request may upscale a few pixels to 25 MP, a
            // second of legitimate work that would be the fuzzer's time spent on filler rather than on parsing.
            var configuration = IIIFService.Configuration()
            configuration.limits = IIIFLimits(maxArea: 1 << 20)
            let service = IIIFService(catalog: try ImageCatalog(path: folder), configuration: configuration)
            let web = webFolder.flatMap { try? ViewerAssets(folder: $0) }
            let made = Site(service: service, viewer: web)
            site = made
            return made
        }
    }
}
