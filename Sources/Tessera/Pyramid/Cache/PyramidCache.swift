import Foundation
import Synchronization

/// Pyramidal TIFFs built in the background for large images that are not pyramids themselves, so that the server
/// answers their tiles from stored bytes once the build is done. Coarse levels come first: a preview pyramid of the
/// image at `1/previewFactor` of its size, made from a reduced-scale decode in a fraction of the full build's time,
/// answers requests at that scale or smaller until the full pyramid is there (such requests wait for it rather than
/// decode the image themselves); finer requests are region reads of the source meanwhile. Previews are built on
/// their own queue, so a new image's coarse levels never wait behind another image's full build. One build per
/// image, however many requests ask; keyed by path, size and modification time, so a changed file gets a new
/// pyramid; the least recently used pyramids are removed beyond the size limit. `source(for:...)` is what readers
/// call (the server and the native viewer): what to read the image from now.
///
/// The folder may be shared by several processes (on one machine, or over a shared file system where they see
/// the images at the same paths): each pyramid is built by whichever claims its lock first (`BuildLocks`), the
/// others read the image by regions (and the preview, once there) meanwhile and the pyramid once it appears. A
/// build's temporary files never outlive it: removed when it fails, counted against the limit while it runs,
/// and, left by a process that died, removed at start-up or when its stale lock is taken over (`CacheFolder`).
///
/// A plain sequential JPEG file gets its entropy index (`JPEGEntropyIndex`) first, in one pass on every core,
/// beside the pyramids: every region of it at every scale is then decoded from the nearest saved state, which is
/// what its tiles are read from until a pyramid is there. In `Mode.index` such a file gets the index alone and no
/// pyramid; other images (progressive JPEGs, other formats) get pyramids in both modes.
public final class PyramidCache: Sendable {
    /// What a large plain sequential JPEG gets in the cache.
    public enum Mode: String, CaseIterable, Sendable {
        /// Its entropy index, then the preview and the full pyramid: tiles are sent as stored once it is built.
        case pyramid
        /// Its entropy index only: every tile a region read through it, no pyramid on disk.
        case index
    }

    /// The cached pyramids of one image: the full one once it is built; until then the preview once that is.
    struct Pyramids: Sendable, Equatable {
        /// The pyramidal TIFF of the whole image, at full resolution.
        var full: String?
        /// A pyramidal TIFF of the image reduced `previewFactor` times (sizes rounded up), while `full` is nil.
        var preview: String?
    }

    /// What to read an image from now: the full pyramid once it is built, else the image itself, with the preview
    /// pyramid once that is built (for requests at `1/previewFactor` of full size or smaller).
    public struct CachedSource: Sendable {
        /// The image file itself.
        public let file: ImageSource
        /// What to read: the full pyramid when it is built, else `file`.
        public let source: ImageSource
        /// Whether `source` is the cached pyramid rather than the file.
        public let isCachedPyramid: Bool
        /// The preview pyramid while the full one is being built; nil before it is built and once the full one is.
        public let preview: ImageSource?
        /// The preview's file, to tell whether a later call found a new one.
        let previewPath: String?

        /// The file read as it is: no pyramid in a cache.
        public init(file: ImageSource) {
            self.init(file: file, source: file, isCachedPyramid: false, preview: nil, previewPath: nil)
        }

        init(file: ImageSource, source: ImageSource, isCachedPyramid: Bool, preview: ImageSource?, previewPath: String?) {
            self.file = file
            self.source = source
            self.isCachedPyramid = isCachedPyramid
            self.preview = preview
            self.previewPath = previewPath
        }
    }

    /// How many times smaller than the image its preview pyramid is: JPEG decodes at this scale natively.
    public static let previewFactor = 8
    /// The most bytes the cached pyramids take together unless told otherwise: 8 GiB.
    public static let defaultLimit = 8 << 30
    /// Seconds without a heartbeat after which a build's lock is taken to be a dead process's, unless told otherwise.
    public static let defaultLockTimeout = 10
    /// What large plain sequential JPEGs get unless told otherwise: pyramids, whose stored tiles serve several
    /// times the requests per second of region reads once built, and whose build's tiles in the meantime are read
    /// through the index (BENCHMARKS.md, "Serving a large plain image it has never seen").
    public static let defaultMode = Mode.pyramid

    /// The folder the pyramids are kept in.
    public let folder: String
    /// The most bytes the cached pyramids may take together.
    public let limit: Int
    /// Images smaller than this on both sides are read directly; their tiles are cheap without a pyramid.
    public let minimumSide: Int
    /// What large plain sequential JPEGs get: pyramids (after their index) or their index alone.
    public let mode: Mode
    /// The folder's files as a whole: leftovers of dead builds, the size limit.
    private let contents: CacheFolder
    /// Told a line about each finished or failed build, e.g. for a server's log.
    private let log: @Sendable (String) -> Void
    private let building = Mutex<Set<String>>([])
    private let buildObservers = Mutex<[@Sendable (BuildReport) -> Void]>([])

    /// One finished build, for monitoring: a preview or a full pyramid, whether it was built, and how long it took.
    public struct BuildReport: Sendable {
        public let isPreview: Bool
        public let succeeded: Bool
        public let seconds: Double
    }

    /// Calls `observer` (on the build's thread) as each build finishes.
    public func observeBuilds(_ observer: @escaping @Sendable (BuildReport) -> Void) {
        buildObservers.withLock { $0.append(observer) }
    }
    /// The previews and entropy indexes being built or queued, by file: a group that is left when the file is done.
    private let pending = Mutex<[String: DispatchGroup]>([:])
    /// The entropy indexes this process checked, by file: true when there (loaded or built), false when none can
    /// be built.
    private let indexes = Mutex<[String: Bool]>([:])
    private let previewBuilds = DispatchQueue(label: "tessera.pyramid-cache.previews", qos: .userInitiated)
    let fullBuilds = DispatchQueue(label: "tessera.pyramid-cache.full", qos: .utility)

    /// Where pyramids are kept unless told otherwise: `tessera` in `$XDG_CACHE_HOME`, or in `~/.cache`. Read with
    /// getenv, which every command's options ask for: Foundation's copy of the whole environment and its home
    /// directory lookup took about half a millisecond together at start-up.
    public static var defaultFolder: String {
        let cache = getenv("XDG_CACHE_HOME").map { String(cString: $0) }
            ?? (getenv("HOME").map { String(cString: $0) } ?? NSHomeDirectory()) + "/.cache"
        return cache + "/tessera"
    }

    /// A cache in `folder` (created if missing; what dead builds left in it is removed) holding at most `limit`
    /// bytes, for images of `minimumSide` pixels or more on a side, plain sequential JPEGs getting what `mode`
    /// says; a build's lock whose heartbeat stopped `lockTimeout` seconds ago is taken over. `log` is told a line
    /// about each build that finishes or fails.
    public init(folder: String, limit: Int = defaultLimit, minimumSide: Int = 4096, mode: Mode = defaultMode,
                lockTimeout: Double = Double(defaultLockTimeout), log: @escaping @Sendable (String) -> Void = { _ in }) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw TesseraError.io(path: folder, detail: "cannot create the cache folder")
        }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw TesseraError.io(path: folder, detail: "the cache folder is not writable")
        }
        self.folder = folder
        self.limit = limit
        self.minimumSide = minimumSide
        self.mode = mode
        self.log = log
        contents = CacheFolder(path: folder, locks: BuildLocks(timeout: lockTimeout))
        contents.removeLeftovers()
    }

    /// The cached pyramids of `source` built so far, starting their build (once) when none is running; nil for
    /// sources that get none: tiled pyramids already, or small.
    func pyramids(for source: ImageSource, path: String, modified: Date, size: Int) -> Pyramids? {
        let properties = source.properties
        guard max(properties.width, properties.height) >= minimumSide, properties.levels.count == 1 else { return nil }
        let base = name(path: path, modified: modified, size: size)
        let file = base + ".tif", preview = base + ".preview.tif"
        let index = base + "." + JPEGEntropyIndex.fileExtension
        // In index mode the index is checked (loaded, or built) once per process; an image that gets none (not a
        // plain JPEG file, a damaged scan, a file too small for one) gets pyramids like any other.
        if mode == .index {
            switch indexes.withLock({ $0[index] }) {
            case true?:
                return Pyramids()
            case nil:
                guard let path = Self.indexablePath(of: source) else {
                    indexes.withLock { $0[index] = false }
                    break
                }
                if claim(index, lock: CacheFolder.lock(ofStem: base)) {
                    startIndexBuild(of: path, into: index, lock: CacheFolder.lock(ofStem: base))
                }
                return Pyramids()
            case false?:
                break
            }
        }
        if FileManager.default.fileExists(atPath: file) {
            utime(file, nil)  // most recently used
            return Pyramids(full: file)
        }
        let lock = CacheFolder.lock(ofStem: base)
        if claim(file, lock: lock) {
            // The pyramid may have appeared between the look above and the claim: a build that just finished.
            if FileManager.default.fileExists(atPath: file) {
                finish(file: file, lock: lock)
                return Pyramids(full: file)
            }
            contents.removeTemporaryFiles(ofStem: base)
            startBuilds(of: source, path: path, file: file, preview: preview,
                        index: Self.indexablePath(of: source).map { ($0, index) }, lock: lock)
        }
        return Pyramids(preview: FileManager.default.fileExists(atPath: preview) ? preview : nil)
    }

    /// Claims the build of `file` for this process, once in it and once among the processes sharing the folder
    /// (by `lock`); false when another build has it.
    private func claim(_ file: String, lock: String) -> Bool {
        building.withLock { building in
            guard !building.contains(file), contents.locks.claim(lock) else { return false }
            building.insert(file)
            return true
        }
    }

    /// The path of `source` when it is a file that gets an entropy index: a plain sequential 8-bit gray or
    /// 3-component JPEG that Tessera's sequential decoder reads; nil for anything else.
    static func indexablePath(of source: ImageSource) -> String? {
        let properties = source.properties
        guard case let .file(path) = source.input, properties.format == .jpeg, !properties.isProgressive,
              properties.bitDepth == 8, properties.channels == 1 || properties.channels == 3,
              let scans = try? JPEGScanIndex(input: source.input, firstScanOnly: true),
              SequentialCoefficientDecoder.canDecode(scans) else { return nil }
        return path
    }

    /// Marks `file` as being built until `work` returns, for `waitFor`; runs `work` on the preview queue.
    private func whilePending(_ file: String, _ work: @escaping @Sendable () -> Void) {
        let done = DispatchGroup()
        done.enter()
        pending.withLock { $0[file] = done }
        previewBuilds.async { [self] in
            work()
            pending.withLock { $0[file] = nil }
            done.leave()
        }
    }

    /// Builds (or, when the one there can be trusted, reuses) the entropy index of the JPEG at `path`, which is
    /// `file`, on every core (speculatively: on 2 cores that halves the serial pass's wall time for 1.1x its
    /// CPU); records whether it is there.
    private func buildIndex(of path: String, file: String) {
        let start = Date()
        do {
            let outcome = try JPEGEntropyIndex.loadOrBuild(for: path, folder: folder).outcome
            if outcome != .reused {
                log("the entropy index of \(path): \(outcome.rawValue) in "
                    + String(format: "%.2f", Date().timeIntervalSince(start)) + " s")
            }
            indexes.withLock { $0[file] = true }
        } catch {
            log("the entropy index of \(path) was not built: \(error)")
            indexes.withLock { $0[file] = false }
        }
    }

    /// Builds the entropy index alone of the JPEG at `path` into `file`, holding `lock` until done.
    private func startIndexBuild(of path: String, into file: String, lock: String) {
        whilePending(file) { [self] in
            defer { finish(file: file, lock: lock) }
            buildIndex(of: path, file: file)
        }
    }

    /// Builds the entropy index (when `index` names a JPEG's path and the index file), the preview, then the full
    /// pyramid, of `source` (the image at `path`), holding `lock` until done.
    private func startBuilds(of source: ImageSource, path: String, file: String, preview: String,
                             index: (path: String, file: String)?, lock: String) {
        if let index, !FileManager.default.fileExists(atPath: index.file) {
            whilePending(index.file) { [self] in buildIndex(of: index.path, file: index.file) }
        }
        whilePending(preview) { [self] in
            if !FileManager.default.fileExists(atPath: preview) {
                try? build(source, scale: Self.previewFactor, into: preview)
            }
            fullBuilds.async { [self] in
                defer { finish(file: file, lock: lock) }
                let start = Date()
                do {
                    try build(source, scale: 1, into: file)
                    log("built the pyramid of \(path) in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
                } catch {
                    log("the pyramid of \(path) was not built: \(error)")
                }
                try? FileManager.default.removeItem(atPath: preview)
                contents.evict(limit: limit)
            }
        }
    }

    /// Ends this process's build of `file`: its lock released.
    private func finish(file: String, lock: String) {
        contents.locks.release(lock)
        _ = building.withLock { $0.remove(file) }
    }

    /// What to read `file` (the image at `path`, with the file's modification time and size in bytes) from now,
    /// starting its pyramid's build (once) when there is none: the full pyramid once built, else the file with its
    /// preview once that is built. `current`, what the caller read the same unchanged file from last, is returned
    /// as it is while nothing new is built, so nothing is opened again.
    public func source(for file: ImageSource, path: String, modified: Date, size: Int,
                       current: CachedSource? = nil) -> CachedSource {
        if let current, current.isCachedPyramid { return current }
        guard let pyramids = pyramids(for: file, path: path, modified: modified, size: size) else {
            return current ?? CachedSource(file: file)
        }
        if let full = pyramids.full, let pyramid = try? ImageSource(path: full, budget: file.budget) {
            return CachedSource(file: file, source: pyramid, isCachedPyramid: true, preview: nil, previewPath: nil)
        }
        if let current, current.previewPath == pyramids.preview { return current }
        let preview = pyramids.preview.flatMap { try? ImageSource(path: $0, budget: file.budget) }
        return CachedSource(file: file, source: file, isCachedPyramid: false, preview: preview,
                            previewPath: preview == nil ? nil : pyramids.preview)
    }

    /// Waits, at most `timeout` seconds, for the preview of the image at `path` while it is being built; returns
    /// whether one was being built and is done. A coarse request is answered from the preview far sooner than by
    /// decoding the image for itself.
    public func waitForPreview(path: String, modified: Date, size: Int, timeout: Double = 30) -> Bool {
        waitFor(name(path: path, modified: modified, size: size) + ".preview.tif", timeout: timeout)
    }

    /// Waits, at most `timeout` seconds, for the entropy index of the JPEG at `path` while it is being built;
    /// returns whether one was being built and is done. A fine request of a plain JPEG is read through the index
    /// in milliseconds, far sooner than by decoding every row above its region meanwhile.
    public func waitForIndex(path: String, modified: Date, size: Int, timeout: Double = 30) -> Bool {
        waitFor(name(path: path, modified: modified, size: size) + "." + JPEGEntropyIndex.fileExtension, timeout: timeout)
    }

    private func waitFor(_ file: String, timeout: Double) -> Bool {
        guard let group = pending.withLock({ $0[file] }) else { return false }
        return group.wait(timeout: .now() + timeout) == .success
    }

    /// Blocks until no build is running or queued, for tests and shutdown.
    public func waitUntilIdle() {
        while !building.withLock(\.isEmpty) {
            previewBuilds.sync {}
            fullBuilds.sync {}
        }
    }

    /// Builds the pyramid of `source` read at `1/scale` of its size.
    private func build(_ source: ImageSource, scale: Int, into file: String) throws {
        let start = DispatchTime.now()
        var succeeded = false
        defer {
            let report = BuildReport(isPreview: scale != 1, succeeded: succeeded,
                                     seconds: Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
            for observer in buildObservers.withLock({ $0 }) { observer(report) }
        }
        let reader = try source.makeReader(ReadOptions(scale: scale))
        let plan = try PyramidPlan(imageSize: reader.size, tileSize: 256, depth: .oneTile)
        var options = PyramidBuilder.Options()
        options.encoding.quality = 85
        // Half the cores: the server keeps the rest for requests while the pyramid builds.
        options.threads = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
        let sink = try PyramidalTIFFSink(path: file, plan: plan, pixelFormat: reader.format.with(bitDepth: 8),
                                         options: options, levelStorage: .pages)
        _ = try PyramidBuilder(plan: plan, sink: sink, options: options).build(from: reader)
        succeeded = true
    }

    /// The cache's files for the image, without their extension: named from its path, size and modification time.
    private func name(path: String, modified: Date, size: Int) -> String {
        Self.fileStem(in: folder, path: path, modified: modified, size: size)
    }

    /// The files a cache in `folder` keeps for the image at `path` (its size in bytes and modification time),
    /// without their extension: a changed file gets new names. Its pyramids and its entropy index are named so.
    static func fileStem(in folder: String, path: String, modified: Date, size: Int) -> String {
        "\(folder)/" + stableHash("\(path)\u{0}\(size)\u{0}\(modified.timeIntervalSince1970)")
    }
}
