import Synchronization
import TesseraTiling

/// Hands each frame's plan from the render thread, which must not wait, to the scheduler actor, in order, and
/// keeps the scheduler's latest statistics where the overlay can read them without waiting.
///
/// ```
/// render thread: submit(plan) -> stream (newest plan only) -> task: await scheduler.update(plan) -> statistics
/// ```
final class SchedulerUpdates: Sendable {
    private let continuation: AsyncStream<TilePlan>.Continuation
    private let latest = LatestStatistics()
    private let task: Task<Void, Never>

    /// Starts forwarding plans to `scheduler`.
    init(scheduler: TileScheduler<ViewerTileProvider>) {
        // A plan supersedes the one before it, so only the newest waits.
        let (stream, continuation) = AsyncStream.makeStream(of: TilePlan.self, bufferingPolicy: .bufferingNewest(1))
        self.continuation = continuation
        let latest = self.latest
        task = Task.detached {
            for await plan in stream {
                await scheduler.update(plan)
                let statistics = await scheduler.statistics
                let load = await scheduler.load
                latest.value.withLock { $0 = (statistics, load) }
            }
            await scheduler.update(.empty)
            await scheduler.waitUntilIdle()
        }
    }

    /// Makes `plan` the scheduler's work, as soon as it takes it.
    func submit(_ plan: TilePlan) {
        continuation.yield(plan)
    }

    /// The scheduler's counters after its last update; nil before the first.
    var statistics: TileScheduler<ViewerTileProvider>.Statistics? { latest.value.withLock { $0?.statistics } }

    /// The tiles being made and the requests waiting, after the scheduler's last update.
    var load: (running: Int, queued: Int) { latest.value.withLock { $0?.load ?? (0, 0) } }

    /// Stops forwarding, cancels what is queued and waits for the tiles being made to finish.
    func finish() async {
        continuation.finish()
        await task.value
    }
}

/// The scheduler's counters and load, shared between the forwarding task and the render thread.
private final class LatestStatistics: Sendable {
    typealias Snapshot = (statistics: TileScheduler<ViewerTileProvider>.Statistics, load: (running: Int, queued: Int))
    let value = Mutex<Snapshot?>(nil)
}
