import CZlib
import Foundation

/// Blocks of remote files kept in a folder on disk, behind a `BlockCache`'s memory: they outlive the process and are
/// shared by every process on the machine given the same folder. One file per block, `{hash}.block`, holding the
/// block's name (its file's URL, version and block size, and its index), its length and CRC-32, then its bytes: a
/// block of another version, a truncated or damaged file, is a miss (and a damaged file is removed), never bytes.
/// Written under a temporary name and renamed (`AtomicFile`), so other processes see a whole file or none. Bounded in
/// bytes: a read touches the file's modification time, and the least recently used files are removed first, down to
/// nine tenths of the limit, when this process's count of the folder passes the limit (the folder is counted afresh
/// on the first write and after every sixteenth of the limit written, so each process writing into a shared folder
/// may take it over the limit by at most that sixteenth).
public final class BlockFolder: @unchecked Sendable {
    /// The folder.
    public let path: String
    /// The most bytes the block files may take.
    public let limit: Int

    /// The limit unless told otherwise: 4 GiB.
    public static let defaultLimit = 4 << 30

    private let lock = NSLock()
    /// The bytes the folder holds as far as this process knows: its last count plus what it wrote since.
    private var counted = 0
    private var writtenSinceCount = 0
    private var hasCounted = false
    private var isTrimming = false

    private static let magic = Array("TesseraBlock1\n".utf8)
    private static let suffix = ".block"
    /// How old a temporary file must be before a trim takes it for a dead process's leftover, in seconds.
    private static let leftoverAge: TimeInterval = 600

    /// The folder at `path` (created if missing) holding at most `limit` bytes of blocks.
    public init(path: String, limit: Int = BlockFolder.defaultLimit) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw TesseraError.io(path: path, detail: "cannot create the block cache folder")
        }
        self.path = path
        self.limit = max(0, limit)
    }

    /// The bytes the block files take now, counted in the folder.
    public var byteCount: Int { entries().reduce(0) { $0 + $1.bytes } }

    /// The file `key` is kept in.
    func file(of key: BlockCache.Key) -> String { "\(path)/\(stableHash(Self.name(of: key)))\(Self.suffix)" }

    /// What a block file records as its block's name.
    private static func name(of key: BlockCache.Key) -> String { "\(key.file)\n\(key.index)" }

    /// Whether a file for `key` is there (it may still prove damaged or another block's when read).
    func contains(_ key: BlockCache.Key) -> Bool { access(file(of: key), F_OK) == 0 }

    /// The block, when its file is there, whole, and of this name; marks it used. A damaged file is removed.
    func block(_ key: BlockCache.Key) -> [UInt8]? {
        let path = file(of: key)
        guard let contents = FileManager.default.contents(atPath: path) else { return nil }
        switch Self.decode(Array(contents), name: Array(Self.name(of: key).utf8)) {
        case let .block(bytes):
            utimes(path, nil)
            return bytes
        case .otherBlock:
            return nil
        case .damaged:
            unlink(path)
            return nil
        }
    }

    /// Writes the block's file unless it is there already (then marks it used), and keeps the folder within its limit.
    /// A failed write (a full disk, a folder gone) loses only the block's place in the folder.
    func store(_ key: BlockCache.Key, _ bytes: [UInt8]) {
        let path = file(of: key), name = Array(Self.name(of: key).utf8)
        let encoded = Self.encode(bytes, name: name)
        var status = stat()
        if stat(path, &status) == 0, Int(status.st_size) == encoded.count {
            utimes(path, nil)
            return
        }
        guard let output = try? AtomicFile(path: path), let handle = output.handle,
              fwrite(encoded, 1, encoded.count, handle) == encoded.count, (try? output.commit()) != nil else { return }
        noteWritten(encoded.count)
    }

    // MARK: - The file format

    private enum Decoded {
        case block([UInt8])
        case otherBlock
        case damaged
    }

    /// Magic, name length (4 bytes, little-endian), name, block length, CRC-32 of the block, the block.
    private static func encode(_ bytes: [UInt8], name: [UInt8]) -> [UInt8] {
        magic + littleEndian(name.count) + name + littleEndian(bytes.count) + littleEndian(checksum(bytes[...])) + bytes
    }

    private static func decode(_ contents: [UInt8], name: [UInt8]) -> Decoded {
        var at = magic.count
        func field() -> Int? {
            guard at + 4 <= contents.count else { return nil }
            defer { at += 4 }
            return (0..<4).reduce(0) { $0 | Int(contents[at + $1]) << (8 * $1) }
        }
        guard contents.starts(with: magic), let nameLength = field(), at + nameLength <= contents.count else { return .damaged }
        guard contents[at..<(at + nameLength)].elementsEqual(name) else { return .otherBlock }
        at += nameLength
        guard let length = field(), let sum = field(), contents.count - at == length,
              checksum(contents[at...]) == sum else { return .damaged }
        return .block(Array(contents[at...]))
    }

    private static func littleEndian(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    private static func checksum(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.withUnsafeBufferPointer { Int(crc32(0, $0.baseAddress, uInt($0.count))) }
    }

    // MARK: - The bound

    /// One file in the folder: its path, size in bytes, modification time, and whether it is a block file (else an
    /// `AtomicFile`'s temporary file).
    private struct Entry {
        let path: String
        let bytes: Int
        let modified: TimeInterval
        let isBlock: Bool
    }

    private func entries() -> [Entry] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return names.compactMap { name in
            let isBlock = name.hasSuffix(Self.suffix)
            guard isBlock || AtomicFile.target(ofTemporaryName: name)?.hasSuffix(Self.suffix) == true else { return nil }
            let file = "\(path)/\(name)"
            guard let stamp = FileStamp(path: file) else { return nil }
            return Entry(path: file, bytes: stamp.size, modified: stamp.modified.timeIntervalSince1970, isBlock: isBlock)
        }
    }

    /// Counts `bytes` written, and counts the folder afresh (trimming it) when due.
    private func noteWritten(_ bytes: Int) {
        let due: Bool = lock.withLock {
            counted += bytes
            writtenSinceCount += bytes
            guard !isTrimming, !hasCounted || counted > limit || writtenSinceCount > limit / 16 else { return false }
            isTrimming = true
            return true
        }
        guard due else { return }
        let held = trim()
        lock.withLock {
            counted = held
            writtenSinceCount = 0
            hasCounted = true
            isTrimming = false
        }
    }

    /// Removes dead processes' temporary files and, when the folder is over its limit, the least recently used
    /// blocks down to nine tenths of it; returns the bytes left.
    private func trim() -> Int {
        let now = Date().timeIntervalSince1970
        var held = 0
        var blocks: [Entry] = []
        for entry in entries() {
            if entry.isBlock {
                blocks.append(entry)
                held += entry.bytes
            } else if now - entry.modified > Self.leftoverAge {
                unlink(entry.path)
            } else {
                held += entry.bytes
            }
        }
        guard held > limit else { return held }
        for entry in blocks.sorted(by: { $0.modified < $1.modified }) where held > limit / 10 * 9 {
            if unlink(entry.path) == 0 { held -= entry.bytes }
        }
        return held
    }
}
