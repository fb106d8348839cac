import CSDL2

/// The statistics overlay toggled with `i`: lines of text in the built-in bitmap font on a dark panel at the
/// top left, and the frame rate it reports, measured over the last second.
struct Overlay {
    private var frameTimes: [ContinuousClock.Instant] = []

    /// Counts a frame for the frame rate.
    mutating func countFrame() {
        let now = ContinuousClock.now
        frameTimes.append(now)
        frameTimes.removeAll { now - $0 > .seconds(1) }
    }

    /// Frames drawn in the last second.
    var framesPerSecond: Double { Double(frameTimes.count) }

    /// Draws `lines` into `window`'s frame, two font pixels per point.
    func draw(lines: [String], in window: SDLWindow) {
        let scale = max(1, Int((window.pixelsPerPoint * 2).rounded()))
        let margin = 4 * scale, lineHeight = (BitmapFont.glyphHeight + 3) * scale
        let width = (lines.map { BitmapFont.size(of: $0, scale: scale).width }.max() ?? 0) + 2 * margin
        let height = lines.count * lineHeight + 2 * margin - 3 * scale
        window.fill([SDL_Rect(x: 0, y: 0, w: Int32(width + margin), h: Int32(height + margin))],
                    red: 0, green: 0, blue: 0, alpha: 170)
        let text = lines.enumerated().flatMap { index, line in
            BitmapFont.rects(for: line, x: margin + margin / 2, y: margin + margin / 2 + index * lineHeight, scale: scale)
        }
        window.fill(text, red: 255, green: 255, blue: 255, alpha: 255)
    }
}
