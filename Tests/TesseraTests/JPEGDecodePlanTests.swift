import Foundation
import Testing
@testable import Tessera

/// Which decoder the plan gives each kind of JPEG request.
@Suite final class JPEGDecodePlanTests {
    let folder: String

    init() throws { folder = try TestImages.folder() }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func plan(_ path: String, scale: Int, budget: MemoryBudget = .default) throws -> JPEGDecodePlan {
        let source = try ImageSource(path: path)
        return try JPEGDecodePlan(input: source.input, properties: source.properties,
                                  request: DecodeRequest(scale: scale, page: 0, budget: budget, allowPartial: false))
    }

    private func name(_ plan: JPEGDecodePlan) -> String {
        switch plan {
        case .libjpeg: return "libjpeg"
        case .banded: return "banded"
        case .dcOnly: return "dcOnly"
        case .indexed: return "indexed"
        case .parallel: return "parallel"
        case .recording: return "recording"
        }
    }

    @Test func eachRequestGetsItsDecoder() throws {
        let image = TestImages.gradient(width: 301, height: 203)
        let progressive = try TestImages.writeProgressive(image, to: folder + "/progressive.jpg", subsampling: .s420)
        let baseline = folder + "/baseline.jpg"
        try TestImages.write(image, to: baseline)
        let small = MemoryBudget(limit: 64 << 10)
        #expect(name(try plan(progressive, scale: 8)) == "dcOnly")
        #expect(name(try plan(progressive, scale: 8, budget: small)) == "dcOnly")
        #expect(name(try plan(progressive, scale: 1)) == "libjpeg")
        #expect(name(try plan(progressive, scale: 2, budget: small)) == "banded")
        #expect(name(try plan(baseline, scale: 8)) == "libjpeg")
        #expect(name(try plan(baseline, scale: 1, budget: small)) == "libjpeg")
    }
}
