import Synchronization

/// A value behind a `Mutex`, in a form ThreadSanitizer can follow.
///
/// On Linux `Synchronization.Mutex` locks through a futex in the uninstrumented runtime, so ThreadSanitizer sees
/// no ordering between two critical sections and reports every `withLock` on a shared `Mutex<Value>` as a race
/// (eight tasks bumping one `Mutex<[Int: Int]>` are reported, although the counts always add up). Here the mutex
/// still does the locking; an atomic acquire on entry and release on exit repeat, where the sanitizer can see
/// them, the edges the futex already provides. The cost is two uncontended atomic operations per critical section.
final class Locked<Value>: @unchecked Sendable {
    private let mutex = Mutex<Void>(())
    private let handoff = Atomic<Int>(0)
    // Only touched inside `withLock`, under `mutex`: that is what makes the unchecked conformance sound.
    private var value: Value

    /// Holds `value`.
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { _ in
            _ = handoff.load(ordering: .acquiring)
            defer { handoff.add(1, ordering: .releasing) }
            return try body(&value)
        }
    }
}
