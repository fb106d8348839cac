import CServerShims

/// How much memory glibc's allocator keeps between a server's requests. By default it maps each block over
/// 128 KiB afresh and gives back free memory past 128 KiB at the top of a thread's heap, so every render that
/// works through a few hundred KiB (libjpeg's coefficient arrays for a tile cut or stretched in its coefficients,
/// a resampler's rows) faulted its pages in again: 74 page faults and a third of its CPU per request.
public enum AllocatorRetention {
    /// Blocks below this many bytes come from the heap rather than a mapping of their own.
    public static let mappingThreshold: Int32 = 1 << 20
    /// Free memory at the top of a heap beyond this many bytes is given back to the system.
    public static let trimThreshold: Int32 = 2 << 20

    /// Keeps request-sized working memory in the process (at most `trimThreshold` free per heap); false where
    /// the allocator is not glibc's, which is left as it is.
    @discardableResult
    public static func keepRequestWorkingSets() -> Bool {
        tessera_set_malloc_thresholds(mappingThreshold, trimThreshold) == 1
    }
}
