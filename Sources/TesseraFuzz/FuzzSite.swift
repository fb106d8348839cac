import Foundation
import Synchronization
import Tessera
import TesseraServer

/// The site the `http` target requests from: a folder in `FuzzScratch.root` holding one 64 x 48 JPEG and one
/// subfolder, the viewer's files from the repository's `Web/` when they are found, made once per process.
enum FuzzSite {
    private static let site = Mutex<Site?>(nil)

    static func shared() throws -> Site {
        try site.withLock { site in
            if let site { return site }
            let folder = FuzzScratch.root + "/site"
            try FileManager.default.createDirectory(atPath: folder + "/maps", withIntermediateDirectories: true)
            try ImageWriter.write(BufferReader(ImageBuffer(width: 64, height: 48, format: .rgb8)), to: folder + "/a.jpg")
            let service = IIIFService(catalog: try ImageCatalog(path: folder))
            let web = ViewerAssets.locate(from: CommandLine.arguments[0]).flatMap { try? ViewerAssets(folder: $0) }
            let made = Site(service: service, viewer: web)
            site = made
            return made
        }
    }
}
