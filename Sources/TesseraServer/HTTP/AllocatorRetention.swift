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
    /// Heaps the threads share. glibc gives each new thread a heap of its own (up to 8 per core): each polling
    /// thread's and worker's first render, and every image a worker opened, faulted in pages of a heap nobody had
    /// used (36 faults for an info.json, 46 for a first thumbnail), while the pages another thread had freed sat
    /// idle. One heap, warmed by `IIIFService.warmUp`, has them: an image's first info.json took 0.1-0.25 ms less
    /// CPU, a new server's first thumbnail 0.1-0.35 ms less. The threads take turns on a few cores: wrk's requests
    /// per second over the viewer benchmark's sequences did not change (13,140 and 13,486 with a heap per thread,
    /// 13,119 and 13,700 with one, median of 3).
    public static let heaps: Int32 = 1

    /// Keeps request-sized working memory in the process (at most `trimThreshold` free, in `heaps` heaps); false
    /// where the allocator is not glibc's, which is left as it is.
    @discardableResult
    public static func keepRequestWorkingSets() -> Bool {
        tessera_set_malloc_thresholds(mappingThreshold, trimThreshold, heaps) == 1
    }
}
