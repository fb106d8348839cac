import Testing
@testable import Tessera

/// The TIFF directory reader that walks pyramids: both byte orders and both offset sizes, values inline and
/// apart, and nil (never a trap) for whatever is not there.
@Suite struct TIFFDirectoryReaderTests {
    /// A big-endian classic TIFF of two chained directories, written by hand: a SHORT and a LONG inline, three
    /// LONGs and 6 bytes stored apart, then a directory of one entry that ends the chain.
    private static let bigEndian: [UInt8] = {
        func short(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func long(_ value: Int) -> [UInt8] { short(value >> 16) + short(value) }
        let first = 8, values = first + 2 + 4 * 12 + 4, second = values + 12 + 6
        var bytes: [UInt8] = [0x4D, 0x4D] + short(42) + long(first)
        bytes += short(4)
        bytes += short(256) + short(3) + long(1) + short(300) + short(0)
        bytes += short(257) + short(4) + long(1) + long(70_000)
        bytes += short(324) + short(4) + long(3) + long(values)
        bytes += short(347) + short(7) + long(6) + long(values + 12)
        bytes += long(second)
        bytes += long(16) + long(1 << 31) + long(7)
        bytes += [0xFF, 0xD8, 1, 2, 0xFF, 0xD9]
        bytes += short(1) + short(256) + short(3) + long(1) + short(150) + short(0) + long(0)
        return bytes
    }()

    @Test func readsABigEndianChainOfDirectories() throws {
        let reader = try #require(directoryReader(Self.bigEndian))
        let first = try #require(reader.directory(at: reader.firstOffset))
        #expect(first.integer(256) == 300)
        #expect(first.integer(257) == 70_000)
        #expect(first.integers(324) == [16, 1 << 31, 7])
        #expect(first.integers(324, count: 2) == [16, 1 << 31])
        #expect(first.integers(324, count: 4) == nil, "fewer values than asked for")
        #expect(first.integer(324) == 16, "the first of values stored apart")
        #expect(first.bytes(347) == [0xFF, 0xD8, 1, 2, 0xFF, 0xD9])
        #expect(first.bytes(256) == nil, "a SHORT is not bytes")
        #expect(first.integer(347) == nil, "nor UNDEFINED an integer")
        #expect(first.count(of: 258) == nil && first.integer(258) == nil)
        let second = try #require(reader.directory(at: first.next))
        #expect(second.integer(256) == 150)
        #expect(second.next == 0 && reader.directory(at: second.next) == nil)
    }

    @Test func whatIsNotThereIsNil() throws {
        let bytes = Self.bigEndian
        #expect(directoryReader(Array("not a TIFF".utf8)) == nil)
        #expect(directoryReader(Array(bytes.prefix(6))) == nil, "a header cut short")
        #expect(directoryReader([0x49, 0x49, 43, 0, 4, 0, 0, 0] + [UInt8](repeating: 0, count: 8)) == nil,
                "BigTIFF with 4-byte offsets")
        let reader = try #require(directoryReader(bytes))
        #expect(reader.directory(at: UInt64(bytes.count)) == nil, "past the end")
        #expect(reader.directory(at: UInt64(bytes.count - 8)) == nil, "entries past the end")
        #expect(reader.directory(at: .max) == nil, "past any file")
        #expect(reader.directory(at: 4) == nil, "no entries: the bytes there count 0")
        // The values stored apart cut off: the directory reads, its values do not.
        let cut = try #require(directoryReader(Array(bytes.prefix(70)))?.directory(at: 8))
        #expect(cut.integer(256) == 300 && cut.integers(324) == nil && cut.bytes(347) == nil)
        // More values than the reader may hold.
        let small = try #require(TIFFDirectoryReader(byteCount: bytes.count, maxValueBytes: 8) { offset, count in
            Array(bytes[Int(offset)..<Int(offset) + count])
        }?.directory(at: 8))
        #expect(small.integers(324) == nil && small.integers(324, count: 2) == [16, 1 << 31])
        #expect(small.integer(1 << 16 | 256) == nil, "libtiff's pseudo-tags are never in a file")
    }

    /// A directory claiming a hundred million tile offsets in a file of a few dozen bytes: no read reaches past
    /// the file's end (nor is anything allocated for one), and the values are nil.
    @Test func aCountPastTheFileReadsNothingPastIt() throws {
        var directory = TIFFDirectory()
        directory.add(.imageWidth, .long, [64])
        let entries = directory.serialized(at: 8, next: 0, .classic)
        // The entry's count and offset rewritten by hand: a hundred million LONGs from byte 8.
        var bytes: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0] + entries
        bytes[10 + 0 ..< 10 + 2] = [0x44, 0x01]  // tag 324, TileOffsets
        bytes[10 + 4 ..< 10 + 8] = [0x00, 0xE1, 0xF5, 0x05]  // 100,000,000
        bytes[10 + 8 ..< 10 + 12] = [8, 0, 0, 0]
        var furthest = 0
        let reader = try #require(TIFFDirectoryReader(byteCount: bytes.count, maxValueBytes: 1 << 30) { offset, count in
            furthest = max(furthest, Int(offset) + count)
            return Array(bytes[Int(offset)..<Int(offset) + count])
        })
        let fields = try #require(reader.directory(at: 8))
        #expect(fields.count(of: 324) == 100_000_000)
        #expect(fields.integers(324) == nil && fields.integers(324, count: 2) == [0x0144_0001, 0xE100_0004])
        #expect(furthest <= bytes.count)
    }

    /// A chain of `count` directories of two entries each, little-endian, classic or BigTIFF; the last points to
    /// `lastNext` (0 ends the chain), given the directories' offsets.
    private static func chain(_ count: Int, _ variant: TIFFDirectory.Variant,
                              lastNext: ([UInt64]) -> UInt64 = { _ in 0 }) -> [UInt8] {
        var directory = TIFFDirectory()
        directory.add(.imageWidth, .long, [64])
        directory.add(.imageLength, .long, [48])
        var bytes: [UInt8] = variant == .classic ? [0x49, 0x49, 42, 0, 8, 0, 0, 0] : [0x49, 0x49, 43, 0, 8, 0, 0, 0]
        if variant == .big { bytes += [16, 0, 0, 0, 0, 0, 0, 0] }
        let offsets = (0..<count).map { UInt64(bytes.count + $0 * directory.byteCount(variant)) }
        for (index, offset) in offsets.enumerated() {
            let next = index + 1 < count ? offsets[index + 1] : lastNext(offsets)
            bytes += directory.serialized(at: offset, next: next, variant)
        }
        return bytes
    }

    /// Pages are counted along the chain, in both offset sizes; a chain that loops back counts each directory
    /// once, and one cut short counts the directories whose next offset is in the file.
    @Test func pagesAreTheDirectoriesOfTheChain() throws {
        for variant in [TIFFDirectory.Variant.classic, .big] {
            #expect(try #require(directoryReader(Self.chain(1, variant))).pageCount == 1)
            #expect(try #require(directoryReader(Self.chain(7, variant))).pageCount == 7)
            let loop = Self.chain(5, variant) { $0[2] }
            #expect(try #require(directoryReader(loop)).pageCount == 5)
            let cut = Self.chain(5, variant)
            #expect(try #require(directoryReader(Array(cut.dropLast(1)))).pageCount == 4)
        }
        var nowhere = Self.chain(1, .classic)
        nowhere[4] = 0xFF
        #expect(try #require(directoryReader(nowhere)).pageCount == 0, "the first directory past the end")
    }
}
