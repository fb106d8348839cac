import Foundation
import Synchronization
import Testing
@testable import Tessera

/// `BriefWatch`: true once what is watched for happens, from another thread too; false when it does not within
/// the time, after that time.
@Suite struct BriefWatchTests {
    @Test func watchingEndsWhenItHappensOrWhenTheTimeIsUp() {
        let flag = Atomic(false)
        Thread {
            usleep(1_000)
            flag.store(true, ordering: .releasing)
        }.start()
        #expect(BriefWatch.until({ flag.load(ordering: .acquiring) }, forNanoseconds: 10_000_000_000))
        let start = DispatchTime.now().uptimeNanoseconds
        #expect(!BriefWatch.until({ false }, forNanoseconds: 2_000_000))
        #expect(DispatchTime.now().uptimeNanoseconds - start >= 2_000_000)
    }
}
