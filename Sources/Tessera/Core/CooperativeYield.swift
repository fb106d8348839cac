import Foundation

/// Yield points: places in long decodes, resamplings and encodes (each iMCU row of a JPEG's planes decoded or
/// encoded, each batch of a JPEG's rows decoded, each strip encoded, each plane resampled and its weights before,
/// each stored tile laid out, and between the steps of a server's render and of its foreseen work: mostly 5-100 us
/// apart) where a thread doing work that nobody waits for, a server's idle-time speculation, can step aside for the
/// threads that answer requests. A scheduler does not always do it for it: under Linux's EEVDF, a thread of the
/// idle class kept a core for 1.2 ms while a request's thread, just preempted on that core, waited to finish its
/// request and the other core sat idle. A thread that set no hook (`run(stepAside:_:)`) pays one thread-local load
/// per point.
public enum CooperativeYield {
    /// Runs `body` on the calling thread with `stepAside` called at each yield point it reaches (the hook the
    /// thread had before is restored after).
    public static func run<Result>(stepAside: @escaping () -> Void, _ body: () throws -> Result) rethrows -> Result {
        let previous = pthread_getspecific(key)
        let hook = Unmanaged.passRetained(Hook(stepAside))
        pthread_setspecific(key, hook.toOpaque())
        defer {
            pthread_setspecific(key, previous)
            hook.release()
        }
        return try body()
    }

    /// A yield point: calls the calling thread's hook, if it has one.
    @inline(__always)
    public static func point() {
        guard let hook = pthread_getspecific(key) else { return }
        Unmanaged<Hook>.fromOpaque(hook).takeUnretainedValue().stepAside()
    }

    private final class Hook {
        let stepAside: () -> Void
        init(_ stepAside: @escaping () -> Void) { self.stepAside = stepAside }
    }

    /// The thread-local slot of the hook.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}
