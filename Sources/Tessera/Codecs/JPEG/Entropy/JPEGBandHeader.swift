import CJPEG

/// The header of a sequential JPEG with a source frame's components, sampling, quantisation tables and colour
/// space but a size of its own and no entropy-coded data: what libjpeg reads to decode a band whose coefficients
/// `BandedJPEGDecoder` feeds it MCU by MCU (`tessera_jpeg_feed_coefficients`). The Huffman tables are
/// placeholders that libjpeg checks but never uses.
///
///     SOI, APP14 "Adobe" (3 components: the colour transform), DQT, SOF1 (width x height), DHT, SOS, EOI
struct JPEGBandHeader {
    private let frame: JPEGFrameHeader
    /// The quantisation tables the frame's components use, by selector, in natural order.
    private let tables: [Int: [Int]]
    /// libjpeg's colour space of the source, which the header's Adobe marker reproduces for 3 components.
    private let colorSpace: J_COLOR_SPACE

    /// The header for bands of the frame whose header `session` has read; nil when the header lacks a table a
    /// component needs.
    init?(frame: JPEGFrameHeader, session: JPEGSession) {
        var tables: [Int: [Int]] = [:]
        for (index, component) in frame.components.enumerated() {
            guard let table = session.quantization(component: index) else { return nil }
            tables[component.quantizationTable] = table
        }
        self.frame = frame
        self.tables = tables
        colorSpace = session.info.pointee.jpeg_color_space
    }

    /// The header of a `width` x `height` image.
    func bytes(width: Int, height: Int) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        func segment(_ marker: UInt8, _ payload: [UInt8]) {
            bytes += [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)]
            bytes += payload
        }
        if frame.components.count == 3 {
            // libjpeg reads transform 1 as YCbCr and 0 as RGB.
            segment(0xEE, Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, colorSpace == JCS_RGB ? 0 : 1])
        }
        let naturalOrder = JPEGScanState.naturalOrder
        for (selector, table) in tables.sorted(by: { $0.key < $1.key }) {
            let wide = table.contains { $0 > 255 }
            var payload: [UInt8] = [UInt8((wide ? 0x10 : 0) | selector)]
            for k in 0..<64 {
                let value = table[naturalOrder[k]]
                payload += wide ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value)]
            }
            segment(0xDB, payload)
        }
        var frameHeader: [UInt8] = [8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
                                    UInt8(frame.components.count)]
        for component in frame.components {
            frameHeader += [component.id, UInt8(component.horizontal << 4 | component.vertical),
                            UInt8(component.quantizationTable)]
        }
        segment(0xC1, frameHeader)
        // One code of one bit for symbol 0, as DC table 0 and AC table 0.
        let placeholder: [UInt8] = [1] + [UInt8](repeating: 0, count: 15) + [0]
        segment(0xC4, [0x00] + placeholder + [0x10] + placeholder)
        var scanHeader: [UInt8] = [UInt8(frame.components.count)]
        for component in frame.components { scanHeader += [component.id, 0x00] }
        segment(0xDA, scanHeader + [0, 63, 0])
        return bytes + [0xFF, 0xD9]
    }
}
