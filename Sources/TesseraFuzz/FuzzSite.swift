import Foundation
import Synchronization
import Tessera
import TesseraServer

/// The site the `http` target requests from: a folder in `FuzzScratch.root` holding one 64 x 48 JPEG and one
/// subfolder, the viewer's files from the repository's `Web/` when they are found, answers of at most 1 MP, made
/// once per process.
enum FuzzSite {
    private static let site = Mutex<Site?>(nil)

    static func shared() throws -> Site {
        try site.withLock { site in
            if let site { return site }
            let folder = FuzzScratch.root + "/site"
            try FileManager.default.createDirectory(atPath: folder + "/maps", withIntermediateDirectories: true)
            try ImageWriter.write(BufferReader(ImageBuffer(width: 64, height: 48, format: .rgb8)), to: folder + "/a.jpg")
            // Answers of at most 1 MP: within the default 25 MP a request may upscale a few pixels to 25 MP, a
            // second of legitimate work that would be the fuzzer's time spent on filler rather than on parsing.
            var configuration = IIIFService.Configuration()
            configuration.limits = IIIFLimits(maxArea: 1 << 20)
            let service = IIIFService(catalog: try ImageCatalog(path: folder), configuration: configuration)
            let web = ViewerAssets.locate(from: CommandLine.arguments[0]).flatMap { try? ViewerAssets(folder: $0) }
            let made = Site(service: service, viewer: web)
            site = made
            return made
        }
    }
}
