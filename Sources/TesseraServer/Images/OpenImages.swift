import Foundation
import Synchronization
import Tessera
import TesseraTiling

/// The images a server has opened, by path or URL, so that a request does not parse a file's header (or a pyramid's
/// tile index) again: each with the file state it was opened at, so a changed file (a remote one found replaced while
/// read) is opened afresh, and with what the
/// pyramid cache says to read it from now. Bounded by the memory the entries hold (estimated), the least recently
/// used dropped first, rather than by a count.
final class OpenImages: Sendable {
    /// An opened image: what to read it from (the cache's answer), and for a pyramid of JPEG tiles (a pyramidal
    /// TIFF, a Deep Zoom or IIIF level-0 folder, a cached pyramid or its preview), its stored tiles.
    struct Image: Sendable {
        let current: PyramidCache.CachedSource
        let tiles: (any StoredJPEGTiles)?
        let previewTiles: (any StoredJPEGTiles)?
        /// The file's modification time and size in bytes when it was opened (a remote file's time is 0).
        let modified: Date
        let size: Int
        /// What the pyramid cache and the response cache know the image by: its path, or its URL and version.
        let cacheKey: String
        /// What tells this file, as it was opened, from another file or version in the keys of the caches and in
        /// the validators: `cacheKey`, `size` and `modified`, said once here rather than by every request.
        let version: String
        /// `modified` as Last-Modified states it.
        let lastModified: HTTPLastModified
        /// Taken by the first info.json to foresee the image's edge renders, of this opening of its file
        /// (`IIIFService.edgeRendersFollowUp`): one foresight per file opened, whoever opened it.
        let edgeForesight = FirstClaim()

        /// The image read from `current`, its stored tiles and its preview's found in what `current` reads.
        init(current: PyramidCache.CachedSource, modified: Date, size: Int, cacheKey: String) {
            self.current = current
            tiles = try? current.source.storedJPEGTiles()
            previewTiles = try? current.preview?.storedJPEGTiles()
            self.modified = modified
            self.size = size
            self.cacheKey = cacheKey
            version = "\(cacheKey)\n\(size) \(modified.timeIntervalSince1970)"
            lastModified = HTTPLastModified(modified)
        }

        /// Whether the image is a remote file found replaced: it is opened afresh.
        var hasChanged: Bool {
            if case let .remote(file) = current.file.input { return file.hasChanged }
            return false
        }

        /// What to read the image from now.
        var source: ImageSource { current.source }

        /// Whether it is read as a pyramid, the cache's or one of stored tiles: nothing is left to ask of the
        /// pyramid cache or to parse.
        var readsAsPyramid: Bool { current.isCachedPyramid || tiles != nil }

        /// The memory the entry holds, estimated: the opened files' state (a JPEG 2000's idle decompressors, a
        /// pyramidal TIFF's tile index) and a tile folder's index.
        var byteCost: Int {
            let folderIndexes = [tiles, previewTiles].reduce(0) { $0 + ($1 is StoredTileReader ? 0 : $1?.indexByteCount ?? 0) }
            return 4096 + current.source.heldBytes + (current.preview?.heldBytes ?? 0) + folderIndexes
        }
    }

    /// The memory the open images may hold together unless told otherwise: 64 MiB, some ten thousand plain images.
    static let defaultByteLimit = 64 << 20

    private let cache: PyramidCache?
    private let byteLimit: Int
    /// Whether the server has no request in progress but the one asking (`IIIFService.Configuration.isQuiet`).
    private let isQuiet: @Sendable () -> Bool
    private let entries = Mutex<(images: LRUList<String, Image>, bytes: Int)>((LRUList(), 0))

    /// Open images read through `cache` (nil reads every image as it is), holding at most `byteLimit` bytes; a
    /// local file is opened on a polling thread while `isQuiet`.
    init(cache: PyramidCache?, byteLimit: Int = defaultByteLimit, isQuiet: @escaping @Sendable () -> Bool) {
        self.cache = cache
        self.byteLimit = byteLimit
        self.isQuiet = isQuiet
    }

    /// Whether `path` is open (as it was when opened: the file may have changed since).
    func isOpen(_ path: String) -> Bool { entries.withLock { $0.images.peek(path) != nil } }

    /// How many images are open, and the memory they hold.
    var usage: (count: Int, bytes: Int) { entries.withLock { ($0.images.count, $0.bytes) } }

    /// The opened image for `path`, opened again when the file changed or the cache built a pyramid for it. On a
    /// polling thread an image open already as a pyramid or with stored tiles is answered (nothing left to ask of
    /// the pyramid cache or to parse), and a local file is opened while the server is quiet: with no other request
    /// for the thread to serve meanwhile, handing the open to a worker and the answer back cost a lone viewer's
    /// info.json more than the open (a new server's first, 0.5 ms at the client, went over 3 stored tiles' time
    /// in 21 of 36 passes of the viewer-traffic benchmark, in 4 of 30 opened here). Any other throws `NeedsWorker`.
    /// `stamp` is a local file's size and time when the caller has just read them (`ImageCatalog.File`): nil
    /// reads them.
    func open(_ path: String, _ place: HandlerPlace, stamp known: FileStamp? = nil) throws -> Image {
        let remote = RemoteURL.isRemote(path)
        let local = remote ? nil : known ?? FileStamp(path: path)
        let stamp = (modified: local?.modified ?? .distantPast, size: local?.size ?? 0)
        let unchanged = openUnchanged(path, stamp: remote ? nil : stamp)
        if let unchanged, unchanged.readsAsPyramid { return unchanged }
        if remote || !isQuiet() { try place.requireWorker() }
        let file = try unchanged?.current.file ?? ImageSource(path: path)
        let (key, modified, size) = remote ? file.input.cacheIdentity : (path, stamp.modified, stamp.size)
        // A large plain image is read directly until its pyramid is built, then from the pyramid; its coarse
        // requests come from the preview pyramid as soon as that is built.
        let current = cache?.source(for: file, path: key, modified: modified, size: size, current: unchanged?.current)
            ?? PyramidCache.CachedSource(file: file)
        if let unchanged, current.source === unchanged.current.source, current.preview === unchanged.current.preview {
            return unchanged
        }
        let opened = Image(current: current, modified: modified, size: size, cacheKey: key)
        keep(opened, for: path)
        return opened
    }

    /// The local image at `path` opened (or found open and unchanged) when it is a pyramid of several levels, read
    /// as it is; nil for any other image (a plain one is left to its requests, whose open may start the pyramid
    /// cache's build) or a file that does not open. For `IIIFService.prepare`, before any request. `stamp` as in
    /// `open`.
    func openPyramid(_ path: String, stamp known: FileStamp? = nil) -> Image? {
        guard !RemoteURL.isRemote(path), let stamp = known ?? FileStamp(path: path) else { return nil }
        if let open = openUnchanged(path, stamp: (stamp.modified, stamp.size)) {
            return open.readsAsPyramid ? open : nil
        }
        guard let file = try? ImageSource(path: path), file.properties.levels.count > 1 else { return nil }
        let opened = Image(current: PyramidCache.CachedSource(file: file), modified: stamp.modified, size: stamp.size,
                           cacheKey: path)
        keep(opened, for: path)
        return opened
    }

    /// The image open for `path`, marked as used, when its file is still as it was opened: a local file's
    /// modification time and size as `stamp` says, a remote file (no `stamp`) not found replaced.
    private func openUnchanged(_ path: String, stamp: (modified: Date, size: Int)?) -> Image? {
        entries.withLock { $0.images.use(path) }.flatMap { image in
            (stamp.map { image.modified == $0.modified && image.size == $0.size } ?? !image.hasChanged) ? image : nil
        }
    }

    /// Keeps `image` as the open image for `path`, the least recently used dropped while the entries hold more
    /// than `byteLimit` bytes.
    private func keep(_ image: Image, for path: String) {
        entries.withLock { entries in
            var bytes = entries.bytes + image.byteCost - (entries.images.set(image, for: path)?.byteCost ?? 0)
            let limit = byteLimit
            entries.images.evictOldest(keeping: [path], while: { bytes > limit }) { _, image in bytes -= image.byteCost }
            entries.bytes = bytes
        }
    }
}

/// A claim that only its first taker gets, from any thread.
final class FirstClaim: Sendable {
    private let taken = Atomic(false)

    /// Whether this call took the claim: true once, for the first caller.
    func take() -> Bool {
        !taken.exchange(true, ordering: .relaxed)
    }
}
