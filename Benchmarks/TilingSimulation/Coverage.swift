import TesseraTiling

/// How much of the part of the content on screen a frame's draw list leaves unpainted.
enum Coverage {
    /// The area of `target` (content points) that none of `rects` covers, by sweeping the vertical slabs between
    /// consecutive rect edges and merging the covered intervals in each. A few hundred rects a frame at most.
    static func uncoveredArea(of target: Rect2D, by rects: [Rect2D]) -> Double {
        let clipped = rects.compactMap { $0.intersection(target) }
        let edges = Set([target.minX, target.maxX] + clipped.flatMap { [$0.minX, $0.maxX] }).sorted()
        var uncovered = 0.0
        for (left, right) in zip(edges, edges.dropFirst()) where right > left {
            let middle = (left + right) / 2
            let spans = clipped.filter { $0.minX <= middle && middle < $0.maxX }
                .map { ($0.minY, $0.maxY) }
                .sorted { $0.0 < $1.0 }
            var covered = 0.0
            var reach = target.minY
            for (top, bottom) in spans where bottom > reach {
                covered += bottom - max(top, reach)
                reach = bottom
            }
            uncovered += (right - left) * (target.size.height - covered)
        }
        return uncovered
    }
}
