import TesseraTiling
import XCTest

@testable import TesseraViewer

final class ViewerScriptTests: XCTestCase {
    private func parse(_ json: String) throws -> ViewerScript {
        try ViewerScript(json: Array(json.utf8), name: "trace.json")
    }

    func testEveryStepKindParsesInOrder() throws {
        let script = try parse("""
            [{"view": {"x": 100, "y": 50.5, "zoom": 0.25}}, {"pan": [3, -4]}, {"zoom": 1.5, "at": [10, 20]},
             {"zoom": 2}, {"resize": [640, 480]}, {"key": "i"}, {"wait": "sharp"}, {"frames": 7}, {"screenshot": "a.png"}]
            """)
        XCTAssertNil(script.framesPerSecond)
        XCTAssertEqual(script.steps, [
            .view(center: Point2D(x: 100, y: 50.5), zoom: 0.25), .pan(Point2D(x: 3, y: -4)),
            .zoom(factor: 1.5, at: Point2D(x: 10, y: 20)), .zoom(factor: 2, at: nil),
            .resize(PixelSize(width: 640, height: 480)), .key("i"), .waitUntilSharp, .frames(7), .screenshot("a.png"),
        ])
    }

    func testObjectFormCarriesThePace() throws {
        let script = try parse(#"{"fps": 60, "steps": [{"frames": 1}]}"#)
        XCTAssertEqual(script.framesPerSecond, 60)
        XCTAssertEqual(script.steps, [.frames(1)])
    }

    func testBadStepsAreNamedByNumber() {
        XCTAssertThrowsError(try parse(#"[{"frames": 1}, {"zoom": -2}]"#)) { error in
            XCTAssertEqual("\(error)", "trace.json: step 2: zoom needs a positive factor")
        }
        XCTAssertThrowsError(try parse(#"[{"wait": "forever"}]"#)) { error in
            XCTAssertEqual("\(error)", "trace.json: step 1: wait takes \"sharp\"")
        }
        XCTAssertThrowsError(try parse(#"[{"jump": 1}]"#))
        XCTAssertThrowsError(try parse(#"[{"key": "NoSuchKey"}]"#))
        XCTAssertThrowsError(try parse(#"[{"frames": 1.5}]"#))
        XCTAssertThrowsError(try parse(#"[{"pan": [1]}]"#))
    }

    func testMalformedFilesAreRefused() {
        XCTAssertThrowsError(try parse("[{")) { error in
            XCTAssertEqual("\(error)", "trace.json: not valid JSON")
        }
        XCTAssertThrowsError(try parse(#"{"fps": 0, "steps": []}"#))
        XCTAssertThrowsError(try parse(#""frames""#))
    }

    func testPercentilesUseTheNearestRank() {
        let times = (1...100).map(Double.init)
        XCTAssertEqual(FrameReport.percentile(times, 0.5), 50)
        XCTAssertEqual(FrameReport.percentile(times, 0.99), 99)
        XCTAssertEqual(FrameReport.percentile([7], 0.99), 7)
        XCTAssertEqual(FrameReport.percentile([], 0.5), 0)
    }
}
