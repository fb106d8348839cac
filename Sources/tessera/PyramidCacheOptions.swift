import Tessera

/// The options of the pyramid cache on disk where large plain images get a pyramidal TIFF, shared by `serve`
/// and `view`.
enum PyramidCacheOptions {
    static let folder = Option("cache", .text("DIR"), default: PyramidCache.defaultFolder,
                               "where pyramids and entropy indexes of large plain images are kept")
    static let size = Option("cache-size", .byteSize, default: PyramidCache.defaultLimit, "most space the cached pyramids take on disk")
    static let mode = Option("cache-mode", .choice, default: PyramidCache.defaultMode,
                             "what a large plain (sequential) JPEG gets: its entropy index, then pyramids whose tiles are sent as stored (pyramid), or its entropy index alone, every tile a region read through it (index)")
    static let off = Option(flag: "no-cache", "build no pyramids: read large plain images by regions only")
    static let lockTimeout = Option("cache-lock-timeout", .integer(in: 1...3600), default: PyramidCache.defaultLockTimeout,
                                    "seconds without a heartbeat after which another process's pyramid build is taken to be dead and taken over (the cache folder may be shared)")

    static let all: [any OptionDeclaration] = [folder, size, mode, lockTimeout, off]

    /// The cache the options ask for, or nil with `--no-cache`; `log` is told a line about each pyramid build.
    static func open(_ arguments: Arguments, log: @escaping @Sendable (String) -> Void = { _ in }) throws -> PyramidCache? {
        if arguments[off] { return nil }
        return try PyramidCache(folder: arguments[folder], limit: arguments[size], mode: arguments[mode],
                                lockTimeout: Double(arguments[lockTimeout]), log: log)
    }
}
