import Foundation
import Synchronization
import Testing
@testable import Tessera

/// Yield points: the hook a thread installs is called at each iMCU row a JPEG's planes decode or encode (and before
/// the decode starts and the encode ends), at each plane resampled (and once its weights are made), at each batch of
/// a JPEG's rows decoded and each strip encoded, on that thread only, and the hook it had before comes back after.
@Suite struct CooperativeYieldTests {
    @Test func theHookIsCalledAtTheYieldPointsOfADecodeAResamplingAndAnEncode() throws {
        // 64 x 160 at 4:2:0: ten iMCU rows of 16 lines.
        let bytes = try ImageWriter.encode(TestImages.gradient(width: 64, height: 160, format: .rgb8), as: .jpeg,
                                           options: EncodeOptions())
        var calls = 0
        let planes = try CooperativeYield.run(stepAside: { calls += 1 }) {
            try #require(try JPEGPlanes(decoding: .bytes(bytes, name: "tile.jpg"), scale: 1, budget: .default))
        }
        #expect(calls == 11, "one per iMCU row decoded, and one before")
        calls = 0
        let resampled = CooperativeYield.run(stepAside: { calls += 1 }) {
            planes.resampled(region: Rect(x: 0, y: 0, width: 64, height: 160), extent: Size(width: 64, height: 160),
                             to: Size(width: 32, height: 80), subsampling: .s420, kernel: .lanczos3)
        }
        #expect(calls == 6, "two per plane resampled")
        calls = 0
        _ = try CooperativeYield.run(stepAside: { calls += 1 }) {
            try resampled.encoded(options: EncodeOptions(), name: "thumbnail")
        }
        #expect(calls == 6, "one per iMCU row encoded, and one after")
        calls = 0
        _ = try CooperativeYield.run(stepAside: { calls += 1 }) {
            try ImageWriter.encode(ImageSource(bytes: bytes).makeReader(), as: .jpeg, stripHeight: 16)
        }
        #expect(calls >= 20, "one per strip of 16 rows encoded and per batch of rows decoded: \(calls)")
    }

    @Test func aHookIsTheInstallingThreadsAndTheOneBeforeComesBack() throws {
        let bytes = try ImageWriter.encode(TestImages.gradient(width: 64, height: 64, format: .rgb8), as: .jpeg,
                                           options: EncodeOptions())
        let decode = { _ = try JPEGPlanes(decoding: .bytes(bytes, name: "tile.jpg"), scale: 1, budget: .default) }
        var outer = 0, inner = 0
        let elsewhere = Atomic(0)
        try CooperativeYield.run(stepAside: { outer += 1 }) {
            try CooperativeYield.run(stepAside: { inner += 1 }, decode)
            #expect(inner == 5 && outer == 0, "the innermost hook is called")
            try decode()
            #expect(outer == 5, "the outer hook is back")
            let other = Thread {
                _ = try? JPEGPlanes(decoding: .bytes(bytes, name: "tile.jpg"), scale: 1, budget: .default)
                elsewhere.store(1, ordering: .relaxed)
            }
            other.start()
            while elsewhere.load(ordering: .relaxed) == 0 { Thread.sleep(forTimeInterval: 0.001) }
            #expect(outer == 5 && inner == 5, "another thread's decode calls neither")
        }
        try decode()
        #expect(outer == 5, "no hook after")
    }
}
