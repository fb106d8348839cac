import Foundation
import Testing
import Tessera
@testable import TesseraServer

@Suite final class ImageCatalogTests {
    let root: String
    let outside: String

    init() throws {
        let base = NSTemporaryDirectory() + "tessera-catalog-\(UUID().uuidString)"
        root = base + "/root"
        outside = base + "/outside"
        let files = FileManager.default
        try files.createDirectory(atPath: root + "/maps", withIntermediateDirectories: true)
        try files.createDirectory(atPath: outside, withIntermediateDirectories: true)
        for path in [root + "/a.jpg", root + "/maps/b.png", outside + "/secret.jpg"] {
            #expect(files.createFile(atPath: path, contents: Data([1])))
        }
        try files.createSymbolicLink(atPath: root + "/escape.jpg", withDestinationPath: outside + "/secret.jpg")
        try files.createSymbolicLink(atPath: root + "/door", withDestinationPath: outside)
        try files.createSymbolicLink(atPath: root + "/inside.jpg", withDestinationPath: root + "/a.jpg")
    }

    deinit { try? FileManager.default.removeItem(atPath: (root as NSString).deletingLastPathComponent) }

    @Test func identifiersInsideTheRootResolve() throws {
        let catalog = try ImageCatalog(path: root)
        #expect(catalog.file(for: "a.jpg")?.path.hasSuffix("/root/a.jpg") == true)
        #expect(catalog.file(for: "maps/b.png")?.path.hasSuffix("/root/maps/b.png") == true)
        #expect(catalog.file(for: "inside.jpg")?.path.hasSuffix("/root/a.jpg") == true)
        #expect(catalog.identifiers() == ["a.jpg", "inside.jpg", "maps/b.png"])
    }

    @Test func nothingOutsideTheRootIsEverServed() throws {
        let catalog = try ImageCatalog(path: root)
        for identifier in ["../outside/secret.jpg", "maps/../../outside/secret.jpg", outside + "/secret.jpg",
                           "escape.jpg", "door/secret.jpg", "a.jpg\0.png", "", ".", "maps", "maps//b.png",
                           String(repeating: "a/", count: 600) + "a.jpg", "missing.jpg",
                           "-n.////\u{FFFD}/"] {  // NSString's pathExtension trapped on this one (found by fuzzing)
            #expect(catalog.file(for: identifier) == nil, "\(identifier.prefix(40))")
        }
    }

    /// An identifier resolved once is answered from what it resolved to only while its path still reaches that file.
    @Test func aResolvedIdentifierIsResolvedAgainWhenItsPathReachesAnotherFile() throws {
        let catalog = try ImageCatalog(path: root)
        let files = FileManager.default, link = root + "/moving.jpg"
        try files.createSymbolicLink(atPath: link, withDestinationPath: root + "/a.jpg")
        #expect(catalog.file(for: "moving.jpg")?.path.hasSuffix("/root/a.jpg") == true)
        try files.removeItem(atPath: link)
        try files.createSymbolicLink(atPath: link, withDestinationPath: outside + "/secret.jpg")
        #expect(catalog.file(for: "moving.jpg") == nil, "pointed out of the root")
        try files.removeItem(atPath: link)
        try files.createSymbolicLink(atPath: link, withDestinationPath: root + "/maps/b.png")
        #expect(catalog.file(for: "moving.jpg")?.path.hasSuffix("/root/maps/b.png") == true, "pointed at another file")
        try files.removeItem(atPath: link)
        #expect(catalog.file(for: "moving.jpg") == nil, "removed")

        #expect(catalog.file(for: "maps/b.png")?.path.hasSuffix("/root/maps/b.png") == true)
        try files.moveItem(atPath: root + "/maps", toPath: root + "/old-maps")
        try files.createSymbolicLink(atPath: root + "/maps", withDestinationPath: outside)
        #expect(files.createFile(atPath: outside + "/b.png", contents: Data([2])))
        #expect(catalog.file(for: "maps/b.png") == nil, "a folder on its path made a link out of the root")
    }

    /// The file an identifier names comes with its size and time from the `stat(2)` that found it, the first time
    /// and once resolved, through a link too, and as they are after the file is rewritten: opening it needs no
    /// other. A level-0 folder's info.json has none.
    @Test func aFileComesWithTheStampOfTheFileItNames() throws {
        let catalog = try ImageCatalog(path: root)
        for identifier in ["a.jpg", "a.jpg", "inside.jpg"] {
            #expect(catalog.file(for: identifier)?.stamp == FileStamp(path: root + "/a.jpg"), "\(identifier)")
        }
        #expect(FileManager.default.createFile(atPath: root + "/a.jpg", contents: Data([1, 2, 3])))
        let rewritten = catalog.file(for: "inside.jpg")?.stamp
        #expect(rewritten?.size == 3)
        #expect(rewritten == FileStamp(path: root + "/a.jpg"))
        try FileManager.default.createDirectory(atPath: root + "/static", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/static/info.json", contents: Data("{}".utf8)))
        let folder = catalog.file(for: "static")
        #expect(folder?.path.hasSuffix("/root/static/info.json") == true)
        #expect(folder != nil && folder?.stamp == nil)
    }

    @Test func aSingleFileCatalogServesOnlyThatFile() throws {
        let catalog = try ImageCatalog(path: root + "/maps/b.png")
        #expect(catalog.file(for: "b.png") != nil)
        #expect(catalog.file(for: "../a.jpg") == nil)
        #expect(catalog.identifiers() == ["b.png"])
    }

    @Test func pyramidsAreImagesAndTheirTilesAreNot() throws {
        let files = FileManager.default
        for folder in ["/maps/deep_files/0", "/static/full/max/0"] {
            try files.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
        for path in ["/maps/deep.dzi", "/maps/deep_files/0/0_0.jpeg", "/static/info.json", "/static/full/max/0/default.jpg"] {
            _ = files.createFile(atPath: root + path, contents: Data([1]))
        }
        let catalog = try ImageCatalog(path: root)
        #expect(catalog.identifiers() == ["a.jpg", "inside.jpg", "maps/b.png", "maps/deep.dzi", "static"])
        #expect(catalog.file(for: "maps/deep")?.path.hasSuffix("/root/maps/deep.dzi") == true)
        #expect(catalog.file(for: "static")?.path.hasSuffix("/root/static/info.json") == true)
        let alone = try ImageCatalog(path: root + "/static")
        #expect(alone.identifiers() == ["static"])
        #expect(alone.file(for: "static")?.path.hasSuffix("/root/static/info.json") == true)
    }

    /// A zip is listed when its first entries are a pyramid's (ours; a folder zipped with its folders' entries
    /// first), not when it is another archive or no zip; any zip is still found by its identifier, and read (or
    /// refused) as the pyramid it may hold.
    @Test func zipsOfPyramidsAreImagesAndOtherZipsAreNot() throws {
        func zip(_ name: String, _ entries: [String]) throws {
            let container = try ZipContainer(path: root + "/" + name, partial: .discard, buildKey: "k")
            for entry in entries { try container.write(entry.hasSuffix("/") ? [] : [1], to: entry) }
            try container.commit()
        }
        try zip("ours.zip", ["ours/0,0,256,256/256,256/0/default.jpg", "ours/info.json"])
        try zip("folder.szi", ["p/", "p/p_files/", "p/p_files/0/", "p/p_files/0/0_0.jpeg", "p/p.dzi"])
        try zip("docs.zip", ["readme.txt", "notes/a.txt"])
        #expect(FileManager.default.createFile(atPath: root + "/fake.zip", contents: Data("not a zip".utf8)))
        let catalog = try ImageCatalog(path: root)
        #expect(catalog.identifiers() == ["a.jpg", "folder.szi", "inside.jpg", "maps/b.png", "ours.zip"])
        #expect(catalog.file(for: "docs.zip")?.path.hasSuffix("/root/docs.zip") == true)
    }

    @Test func aFolderListsItsImagesAndSubfoldersButNotHiddenOnesPyramidTilesOrWaysOut() throws {
        let files = FileManager.default
        for folder in ["/maps/deep_files/0", "/maps/old", "/.hidden"] {
            try files.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
        for path in ["/maps/deep.dzi", "/maps/notes.txt", "/.hidden/c.jpg", "/maps/.d.jpg"] {
            _ = files.createFile(atPath: root + path, contents: Data([1]))
        }
        let catalog = try ImageCatalog(path: root)
        #expect(catalog.folder("") == ImageCatalog.Folder(path: "", folders: ["maps"], images: ["a.jpg", "inside.jpg"]))
        #expect(catalog.folder("maps") == ImageCatalog.Folder(path: "maps", folders: ["maps/old"],
                                                              images: ["maps/b.png", "maps/deep.dzi"]))
        #expect(catalog.folder("maps/old") == ImageCatalog.Folder(path: "maps/old", folders: [], images: []))
        for refused in ["door", ".hidden", "maps/deep_files", "a.jpg", "missing", "maps/../..", "../outside", "/"] {
            #expect(catalog.folder(refused) == nil, "\(refused)")
        }
        let alone = try ImageCatalog(path: root + "/maps/b.png")
        #expect(alone.folder("") == ImageCatalog.Folder(path: "", folders: [], images: ["b.png"]))
        #expect(alone.folder("maps") == nil)
    }
}
