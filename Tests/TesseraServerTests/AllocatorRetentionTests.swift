import Foundation
import Testing
@testable import TesseraServer

struct AllocatorRetentionTests {
    /// Minor page faults of the calling thread so far (other tests run on other threads meanwhile).
    static func minorFaults() -> Int {
        var usage = rusage()
        getrusage(1, &usage)  // RUSAGE_THREAD (Linux), which the Glibc module leaves out
        return usage.ru_minflt
    }

    /// Blocks of a few hundred KiB, allocated, touched and freed over and over (a render's working set), stop
    /// faulting their pages in once the allocator keeps them: with glibc's defaults each would be a fresh mapping.
    @Test func requestSizedBlocksAreKeptBetweenRequests() {
        #expect(AllocatorRetention.keepRequestWorkingSets())
        let size = 300 << 10
        func request() {
            let blocks = (0..<3).map { _ in UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16) }
            for block in blocks { block.initializeMemory(as: UInt8.self, repeating: 1, count: size) }
            for block in blocks { block.deallocate() }
        }
        request()
        let before = Self.minorFaults()
        for _ in 0..<200 { request() }
        // 75 pages a block when each is mapped afresh: 45,000 faults.
        #expect(Self.minorFaults() - before < 1_000)
    }
}
