import ResamplingLoops

/// `resamplePlane` compiled for CPUs with AVX2 (this module is built for Haswell on x86-64): eight float lanes to a
/// register, where the baseline's SSE2 takes two. Call it only where `tessera_cpu_runs_haswell_code()` says so.
@inline(never)
public func resamplePlaneAVX2(_ source: UnsafePointer<UInt8>, sourceStride: Int, columns: Int, across: AxisTaps,
                              down: AxisTaps, into target: UnsafeMutablePointer<UInt8>, targetStride: Int, width: Int,
                              height: Int) {
    resamplePlane(source, sourceStride: sourceStride, columns: columns, across: across, down: down, into: target,
                  targetStride: targetStride, width: width, height: height)
}
