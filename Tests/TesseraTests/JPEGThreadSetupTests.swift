import Foundation
import Synchronization
import Testing
import Tessera

/// libjpeg-turbo's per-thread set-up: done by a thread's first call, and only by that one.
@Suite struct JPEGThreadSetupTests {
    @Test func aThreadIsSetUpByItsFirstCallOnly() {
        let calls = Mutex<[Bool]>([]), done = DispatchSemaphore(value: 0)
        let thread = Thread {
            calls.withLock { $0 = [JPEGThreadSetup.prepareCallingThread(), JPEGThreadSetup.prepareCallingThread()] }
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(calls.withLock { $0 } == [true, false])
    }
}
