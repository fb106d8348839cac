/// Reads the bits of one scan's entropy-coded data through a file cursor of its own: removes stuffed zero bytes
/// after 0xFF, stops at the next marker (feeding zero bits past it, as libjpeg does) and steps over restart
/// markers when asked. Bits are kept left-aligned in a 64-bit buffer. A value type, so the hot loop that owns it
/// as a local pays no exclusivity checks; its bytes come a chunk at a time from its own `BufferedInput`.
struct JPEGEntropyReader {
    /// The entropy-coded bytes: the file cursor with the chunk read from it, where the data stopped and the zero
    /// bits fed past that. Apart from the bit buffer so that the block loops keep the buffer in registers: only
    /// refills touch these.
    private struct Bytes {
        let input: BufferedInput
        var chunk: [UInt8]
        var chunkEnd = 0
        /// Bytes the next read of the file asks for: a few kilobytes after a jump (a region's row from a saved
        /// state needs little more), doubling while the reads go on from there, up to the chunk's size.
        var readSize = JPEGEntropyReader.firstReadSize
        var index = 0
        /// The file offset of `chunk[0]`.
        var chunkStart: Int
        /// Zero bits fed after the data ended; consuming into them means the scan's data ran out.
        var padding = 0
        /// The marker that ended the data (its second byte), or nil while data remains; 0 when the file ended.
        var marker: UInt8?

        /// The next byte of the file, or nil at its end.
        @inline(__always)
        mutating func nextByte() -> UInt8? {
            if index == chunkEnd {
                chunkStart += chunkEnd
                index = 0
                let size = readSize
                readSize = min(2 * size, chunk.count)
                chunkEnd = (try? chunk.withUnsafeMutableBytes {
                    try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0.prefix(size)))
                }) ?? 0
                if chunkEnd == 0 { return nil }
            }
            let byte = chunk[index]
            index += 1
            return byte
        }

        /// The next byte of entropy-coded data; sets `marker` (and returns 0) at a marker or the end of the file.
        @inline(__always)
        mutating func nextDataByte() -> UInt8 {
            guard let byte = nextByte() else {
                marker = 0
                return 0
            }
            guard byte == 0xFF else { return byte }
            var next = nextByte()
            while next == 0xFF { next = nextByte() }
            guard let next else {
                marker = 0
                return 0
            }
            if next == 0 { return 0xFF }
            marker = next
            return 0
        }

        /// `buffer` holding `count` bits topped up byte by byte to at least 57, with zero bits past the data's end.
        @inline(never)
        mutating func refilled(_ buffer: UInt64, count: Int) -> (buffer: UInt64, count: Int) {
            var buffer = buffer, count = count
            while count <= 56 {
                var byte: UInt8 = 0
                if marker == nil { byte = nextDataByte() }
                if marker != nil { padding += 8 }
                buffer |= UInt64(byte) << UInt64(56 - count)
                count += 8
            }
            return (buffer, count)
        }

        /// Reads on to the marker ending the data and takes it; whether it is RSTn with `number` = n.
        mutating func restart(expecting number: Int) -> Bool {
            padding = 0
            while marker == nil { _ = nextDataByte() }
            let found = marker
            marker = nil
            return found == 0xD0 + UInt8(number & 7)
        }
    }

    private var bytes: Bytes
    var buffer: UInt64 = 0
    /// Valid bits in `buffer`, the zero bits fed past a marker included.
    var bufferedBits = 0
    /// The marker that ended the data (its second byte), or nil while data remains; 0 when the file ended.
    var marker: UInt8? { bytes.marker }

    /// The most bytes read from the file at a time, and the fewest (the first read after a jump).
    private static let chunkSize = 1 << 16
    private static let firstReadSize = 1 << 12

    /// Starts reading at `offset`, the first byte after a scan header.
    init(input: BufferedInput, offset: Int) {
        bytes = Bytes(input: input, chunk: [UInt8](repeating: 0, count: Self.chunkSize), chunkStart: offset)
        input.seek(to: offset)
    }

    /// Everything needed to resume reading exactly where the reader was. Mostly a bit position: the offset of the
    /// first byte with bits left to read and the `skip` bits of it already read (nothing buffered). Near a marker,
    /// or where the bytes behind are no longer at hand, the whole buffer instead: the offset of the next byte to
    /// read, the bits buffered from the bytes before it, the zero bits fed past the marker and the marker.
    struct Snapshot: Equatable {
        var offset: Int
        var skip = 0
        var buffer: UInt64 = 0
        var count = 0
        var padding = 0
        var marker: UInt8?

        /// Whether this is a bit position, with nothing buffered.
        var isBitPosition: Bool { buffer == 0 && count == 0 && padding == 0 && marker == nil }
    }

    /// Where the reader is now, as a bit position when it can be.
    var snapshot: Snapshot {
        let whole = Snapshot(offset: bytes.chunkStart + bytes.index, buffer: buffer, count: bufferedBits,
                             padding: bytes.padding, marker: bytes.marker)
        guard bytes.marker == nil, bytes.padding == 0 else { return whole }
        // Walk back over the bytes the buffered bits came from: a stuffed 0xFF took two, 0xFF 0x00.
        let chunk = bytes.chunk
        var at = bytes.index
        for _ in 0..<(bufferedBits + 7) / 8 {
            guard at >= 3 else { return whole }
            if chunk[at - 1] == 0 && chunk[at - 2] == 0xFF {
                // Fill bytes before a stuffed 0xFF would make the walk ambiguous.
                if chunk[at - 3] == 0xFF { return whole }
                at -= 2
            } else {
                at -= 1
            }
        }
        return Snapshot(offset: bytes.chunkStart + at, skip: (8 - bufferedBits % 8) % 8)
    }

    /// Moves to `snapshot`, taken from a reader of the same file: within the chunk held, without reading.
    mutating func resume(at snapshot: Snapshot) {
        if snapshot.offset >= bytes.chunkStart && snapshot.offset <= bytes.chunkStart + bytes.chunkEnd {
            bytes.index = snapshot.offset - bytes.chunkStart
        } else {
            bytes.input.seek(to: snapshot.offset)
            bytes.chunkStart = snapshot.offset
            bytes.chunkEnd = 0
            bytes.index = 0
            bytes.readSize = Self.firstReadSize
        }
        buffer = snapshot.buffer
        bufferedBits = snapshot.count
        bytes.padding = snapshot.padding
        bytes.marker = snapshot.marker
        if snapshot.skip > 0 {
            fill()
            consume(snapshot.skip)
        }
    }

    /// Whether bits past the end of the data were consumed: the scan's data is cut short or corrupt.
    var overran: Bool { bufferedBits < bytes.padding }

    /// Makes at least 32 bits available: a code and the value after it (16 + 16 bits at most). Reads when fewer
    /// are left, then up to 57 or more.
    @_transparent
    mutating func fill() {
        if bufferedBits < 32 { refill() }
    }

    /// Tops the buffer up to at least 57 bits: where the next 8 bytes of the chunk hold no 0xFF (so no stuffed
    /// byte and no marker), as many as fit at once; else byte by byte.
    @inline(__always)
    private mutating func refill() {
        let at = bytes.index
        if bytes.marker == nil && at + 8 <= bytes.chunkEnd {
            let word = UInt64(bigEndian: bytes.chunk.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt64.self) })
            // A byte of `word` is 0xFF exactly when that byte of `~word` is zero.
            let inverted = ~word
            if (inverted &- 0x0101_0101_0101_0101) & ~inverted & 0x8080_8080_8080_8080 == 0 {
                bytes.index = at &+ append(word)
                return
            }
        }
        (buffer, bufferedBits) = bytes.refilled(buffer, count: bufferedBits)
    }

    /// The coefficient difference whose `size` (1...16) bits are `raw` (T.81 F.2.2.1, EXTEND): those below
    /// 1 << (size - 1) are negative.
    @_transparent
    static func extend(_ raw: Int, size: Int) -> Int {
        raw + (((raw - (1 << (size - 1))) >> 63) & ((-1 << size) + 1))
    }

    /// Steps over the restart marker ending an interval: drops the bits left in the byte, then expects RSTn with
    /// `number` = n. Returns false when another marker, or the end of the file, is there instead.
    mutating func restart(expecting number: Int) -> Bool {
        buffer = 0
        bufferedBits = 0
        // The interval's last byte may have been consumed before the marker was seen; it follows (after any fill).
        return bytes.restart(expecting: number)
    }
}
