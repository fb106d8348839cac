import CCodecShims

/// libjpeg-turbo detects the CPU's SIMD extensions once per thread, on that thread's first encode or decode, with
/// three CPUID instructions. A virtual machine traps each (11 us on the benchmarks' machine), so a thread's first
/// JPEG took 40-100 us longer than its next: a new server's first thumbnail, on a polling thread, paid it.
public enum JPEGThreadSetup {
    /// Has libjpeg-turbo detect the SIMD extensions for the calling thread now (an 8 x 8 JPEG encoded), for a thread
    /// that will make JPEGs, before the work that waits for one. Returns whether this call did it: false when an
    /// earlier call on the thread had (a thread-local load).
    @discardableResult
    public static func prepareCallingThread() -> Bool {
        tessera_jpeg_prepare_thread() == 1
    }
}
