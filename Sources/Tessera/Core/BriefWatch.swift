import Dispatch
import Glibc

/// Watching for what another thread is about to do rather than sleeping until it is done: a sleeping thread whose
/// CPU has halted took 0.14-0.17 ms to wake on the benchmarks' virtual machine (which halts an idle virtual CPU at
/// once), a thread still watching a microsecond or so. For waits expected to be a fraction of a millisecond.
public enum BriefWatch {
    /// Calls `isDone` until it returns true or `nanoseconds` have passed, yielding the core between calls (so that
    /// a thread wanting it, perhaps the one watched for, runs). Returns whether `isDone` returned true.
    public static func until(_ isDone: () -> Bool, forNanoseconds nanoseconds: UInt64) -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + nanoseconds
        while !isDone() {
            if DispatchTime.now().uptimeNanoseconds >= deadline { return false }
            sched_yield()
        }
        return true
    }
}
