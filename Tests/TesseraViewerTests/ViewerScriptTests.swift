import Testing
import TesseraTiling
@testable import TesseraViewer

private func parse(_ json: String) throws -> ViewerScript {
    try ViewerScript(json: Array(json.utf8), name: "trace.json")
}

private func scriptError(_ detail: String) -> ViewerError {
    .script(path: "trace.json", detail: detail)
}

@Test func everyStepKindParsesInOrder() throws {
    let script = try parse("""
        [{"view": {"x": 100, "y": 50.5, "zoom": 0.25}}, {"pan": [3, -4]}, {"zoom": 1.5, "at": [10, 20]},
         {"zoom": 2}, {"resize": [640, 480]}, {"key": "i"}, {"wait": "sharp"}, {"frames": 7},
         {"screenshot": "a.png"}]
        """)
    #expect(script.framesPerSecond == nil)
    #expect(script.steps == [
        .view(center: Point2D(x: 100, y: 50.5), zoom: 0.25), .pan(Point2D(x: 3, y: -4)),
        .zoom(factor: 1.5, at: Point2D(x: 10, y: 20)), .zoom(factor: 2, at: nil),
        .resize(PixelSize(width: 640, height: 480)), .key("i"), .waitUntilSharp, .frames(7), .screenshot("a.png"),
    ])
}

@Test func theObjectFormCarriesThePace() throws {
    let script = try parse(#"{"fps": 60, "steps": [{"frames": 1}]}"#)
    #expect(script.framesPerSecond == 60)
    #expect(script.steps == [.frames(1)])
}

@Test func badStepsAreNamedByNumber() {
    #expect(throws: scriptError("step 2: zoom needs a positive factor")) {
        try parse(#"[{"frames": 1}, {"zoom": -2}]"#)
    }
    #expect(throws: scriptError("step 1: wait takes \"sharp\"")) { try parse(#"[{"wait": "forever"}]"#) }
    #expect(throws: ViewerError.self) { try parse(#"[{"jump": 1}]"#) }
    #expect(throws: ViewerError.self) { try parse(#"[{"key": "NoSuchKey"}]"#) }
    #expect(throws: ViewerError.self) { try parse(#"[{"frames": 1.5}]"#) }
    #expect(throws: ViewerError.self) { try parse(#"[{"pan": [1]}]"#) }
}

@Test func malformedScriptsAreRefused() {
    #expect(throws: scriptError("not valid JSON")) { try parse("[{") }
    #expect(throws: scriptError("\"fps\" must be a positive number")) { try parse(#"{"fps": 0, "steps": []}"#) }
    #expect(throws: ViewerError.self) { try parse(#""frames""#) }
}

@Test func percentilesUseTheNearestRank() {
    let times = (1...100).map(Double.init)
    #expect(FrameReport.percentile(times, 0.5) == 50)
    #expect(FrameReport.percentile(times, 0.99) == 99)
    #expect(FrameReport.percentile([7], 0.99) == 7)
    #expect(FrameReport.percentile([], 0.5) == 0)
}
