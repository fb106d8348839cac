/// One TIFF image file directory (IFD) being written: numeric entries laid out for classic TIFF or BigTIFF, with
/// the values that do not fit in their entry stored right after the directory. Its size depends only on the
/// entries' types and counts, never on their values, so a writer can place every directory before filling in
/// the offsets that point from one to another.
struct TIFFDirectory {
    /// Classic TIFF (32-bit offsets, files under 4 GiB) or BigTIFF (64-bit offsets).
    enum Variant {
        case classic, big

        var entryCountSize: Int { self == .classic ? 2 : 8 }
        var entrySize: Int { self == .classic ? 12 : 20 }
        /// Bytes of value an entry holds inline, and the size of an offset.
        var offsetSize: Int { self == .classic ? 4 : 8 }
        /// The largest file offset the variant can address.
        var maxOffset: UInt64 { self == .classic ? UInt64(UInt32.max) : UInt64.max }
    }

    /// What an entry's values are; `offset` and `directory` take the variant's width.
    enum Kind {
        case short, long, offset, directory

        func type(_ variant: Variant) -> (code: UInt16, size: Int) {
            switch (self, variant) {
            case (.short, _): return (3, 2)
            case (.long, _): return (4, 4)
            case (.offset, .classic): return (4, 4)
            case (.offset, .big): return (16, 8)
            case (.directory, .classic): return (13, 4)
            case (.directory, .big): return (18, 8)
            }
        }
    }

    /// One field: a tag, the kind of its values, and the values.
    struct Entry {
        let tag: UInt16
        let kind: Kind
        let values: [UInt64]
    }

    private var entries: [Entry] = []

    /// Adds a field; fields are written in tag order whatever the order they were added in.
    mutating func add(_ tag: Tag, _ kind: Kind, _ values: [UInt64]) {
        entries.append(Entry(tag: tag.rawValue, kind: kind, values: values))
    }

    /// The directory's size in bytes with its out-of-line values, each kept on an even offset.
    func byteCount(_ variant: Variant) -> Int {
        let head = variant.entryCountSize + entries.count * variant.entrySize + variant.offsetSize
        return entries.reduce(head) { total, entry in
            let size = entry.values.count * entry.kind.type(variant).size
            return total + (size > variant.offsetSize ? size + size % 2 : 0)
        }
    }

    /// The directory's bytes for file offset `offset` (even), pointing to the next directory at `next` (0: none).
    func serialized(at offset: UInt64, next: UInt64, _ variant: Variant) -> [UInt8] {
        var head = ByteWriter(), tail = ByteWriter()
        let sorted = entries.sorted { $0.tag < $1.tag }
        let tailStart = offset + UInt64(variant.entryCountSize + sorted.count * variant.entrySize + variant.offsetSize)
        func word(_ value: UInt64, into writer: inout ByteWriter) {
            variant == .classic ? writer.u32(UInt32(truncatingIfNeeded: value)) : writer.u64(value)
        }
        func values(_ entry: Entry, into writer: inout ByteWriter) {
            for value in entry.values {
                switch entry.kind.type(variant).size {
                case 2: writer.u16(UInt16(truncatingIfNeeded: value))
                case 4: writer.u32(UInt32(truncatingIfNeeded: value))
                default: writer.u64(value)
                }
            }
        }
        variant == .classic ? head.u16(UInt16(sorted.count)) : head.u64(UInt64(sorted.count))
        for entry in sorted {
            let type = entry.kind.type(variant)
            head.u16(entry.tag)
            head.u16(type.code)
            word(UInt64(entry.values.count), into: &head)
            if entry.values.count * type.size <= variant.offsetSize {
                var inline = ByteWriter()
                values(entry, into: &inline)
                inline.pad(to: variant.offsetSize)
                head.bytes += inline.bytes
            } else {
                word(tailStart + UInt64(tail.bytes.count), into: &head)
                values(entry, into: &tail)
                tail.pad(to: 2)
            }
        }
        word(next, into: &head)
        return head.bytes + tail.bytes
    }

    /// The baseline and extension tags the pyramid writer uses.
    enum Tag: UInt16 {
        case newSubfileType = 254
        case imageWidth = 256
        case imageLength = 257
        case bitsPerSample = 258
        case compression = 259
        case photometric = 262
        case samplesPerPixel = 277
        case planarConfiguration = 284
        case predictor = 317
        case tileWidth = 322
        case tileLength = 323
        case tileOffsets = 324
        case tileByteCounts = 325
        case subIFDs = 330
        case extraSamples = 338
        case yCbCrSubsampling = 530
    }
}
