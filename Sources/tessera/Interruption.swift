import Foundation
import Synchronization
import Tessera

/// What a signal does. By default an interrupted run removes the temporary files it was writing, so nothing
/// half-written is left behind, and exits with 128 + the signal; `serve` replaces that with a graceful stop.
final class Interruption: Sendable {
    static let shared = Interruption()

    private let action = Mutex<(@Sendable (Int32) -> Void)?>(nil)

    /// Replaces the default action until the process ends.
    func onInterrupt(_ handler: @escaping @Sendable (Int32) -> Void) {
        action.withLock { $0 = handler }
    }

    func interrupt(_ signal: Int32) {
        if let handler = action.withLock({ $0 }) { return handler(signal) }
        TemporaryFiles.shared.removeAll()
        _exit(128 + signal)
    }
}
