import CZlib
import Foundation
import Synchronization

/// Writes a pyramid into one uncompressed (stored) zip file, so twenty thousand tiles are one file to copy.
/// The zip is built as `.NAME.zip.tessera-partial` beside its final name and renamed when complete; with
/// a `PartialBuildPolicy` that reuses tiles, the complete entries of a partial zip left by a killed build of the
/// same key are kept and the rest is rewritten.
/// Zip64 records are used when the archive passes 65,535 entries or 4 GiB. The archive's comment is the build key,
/// the `CompletionRecord` of a finished zip.
public final class ZipContainer: PyramidContainer {
    public let path: String
    private let partialPath: String
    private let keyPath: String
    private let buildKey: String
    private let state: Mutex<State>

    /// One stored file, as the central directory lists it.
    private struct Entry {
        let name: [UInt8]
        let crc: UInt32
        let size: UInt64
        let offset: UInt64
    }

    private struct State: @unchecked Sendable {
        var handle: UnsafeMutablePointer<FILE>?
        var offset: UInt64 = 0
        var entries: [Entry] = []
        var names: Set<String> = []
    }

    /// DOS time 00:00 on 1980-01-01, so the same pyramid gives the same bytes whenever it is built.
    private static let dosTime: UInt16 = 0
    private static let dosDate: UInt16 = 0x21

    public init(path: String, partial policy: PartialBuildPolicy, buildKey: String) throws {
        self.path = path
        let url = URL(fileURLWithPath: path)
        partialPath = url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".tessera-partial"
        keyPath = partialPath + ".key"
        self.buildKey = buildKey
        // As the folder container does, make the folder OUT goes in, so both containers take the same OUT.
        do {
            try FileManager.default.createDirectory(atPath: url.deletingLastPathComponent().path,
                                                    withIntermediateDirectories: true)
        } catch {
            throw TesseraError.io(path: path, detail: "cannot create its folder: \(error.localizedDescription)")
        }
        var state = State()
        let previousKey = try? String(contentsOfFile: keyPath, encoding: .utf8)
        let resumable = policy == .resumeIfSameBuild ? previousKey == buildKey : policy == .resume
        if resumable && FileManager.default.fileExists(atPath: partialPath) {
            guard previousKey == buildKey else {
                throw TesseraError.invalidArgument(
                    "\(partialPath) is from a build of another image or with other options: rerun without --resume")
            }
            (state.entries, state.offset) = try Self.completeEntries(of: partialPath)
            state.names = Set(state.entries.map { String(decoding: $0.name, as: UTF8.self) })
            guard truncate(partialPath, off_t(state.offset)) == 0 else { throw TesseraError.io(path: partialPath) }
            state.handle = fopen(partialPath, "r+b")
            if let handle = state.handle { fseeko(handle, off_t(state.offset), SEEK_SET) }
        } else {
            state.handle = fopen(partialPath, "wb")
        }
        guard state.handle != nil else { throw TesseraError.io(path: partialPath) }
        do {
            try Data(buildKey.utf8).write(to: URL(fileURLWithPath: keyPath))
        } catch {
            throw TesseraError.io(path: keyPath, detail: "cannot write: \(error.localizedDescription)")
        }
        self.state = Mutex(state)
    }

    deinit {
        state.withLock { if let handle = $0.handle { fclose(handle) } }
    }

    public func hasCompleteFile(at path: String) -> Bool { state.withLock { $0.names.contains(path) } }

    public func write(_ bytes: [UInt8], to path: String) throws {
        let name = Array(path.utf8)
        let crc = bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        try state.withLock { state in
            guard let handle = state.handle else { throw TesseraError.io(path: self.path, detail: "already closed") }
            if state.names.contains(path) {
                // A resumed build writes the metadata again when the killed one had got that far: the new entry
                // replaces the old one in the central directory, whose bytes stay behind unlisted.
                state.entries.removeAll { $0.name == name }
            }
            var header = ByteWriter()
            header.u32(0x0403_4B50)
            header.u16(20)
            header.u16(0x0800)  // names are UTF-8
            header.u16(0)       // stored
            header.u16(Self.dosTime)
            header.u16(Self.dosDate)
            header.u32(crc)
            header.u32(UInt32(bytes.count))
            header.u32(UInt32(bytes.count))
            header.u16(UInt16(name.count))
            header.u16(0)
            header.bytes += name
            guard fwrite(header.bytes, 1, header.bytes.count, handle) == header.bytes.count,
                  fwrite(bytes, 1, bytes.count, handle) == bytes.count else { throw TesseraError.io(path: self.path) }
            state.entries.append(Entry(name: name, crc: crc, size: UInt64(bytes.count), offset: state.offset))
            state.names.insert(path)
            state.offset += UInt64(header.bytes.count + bytes.count)
        }
    }

    public func commit() throws {
        try state.withLock { state in
            guard let handle = state.handle else { return }
            let directory = Self.centralDirectory(state.entries, at: state.offset, comment: Array(buildKey.utf8.prefix(0xFFFF)))
            let wrote = fwrite(directory, 1, directory.count, handle) == directory.count
            let closed = fclose(handle) == 0
            state.handle = nil
            guard wrote && closed else { throw TesseraError.io(path: path) }
            guard rename(partialPath, path) == 0 else { throw TesseraError.io(path: path) }
            unlink(keyPath)
        }
    }

    public func discard() {
        state.withLock { state in
            if let handle = state.handle { fclose(handle) }
            state.handle = nil
            unlink(partialPath)
            unlink(keyPath)
        }
    }

    /// The central directory and end records for `entries`, the directory starting at byte `start`.
    private static func centralDirectory(_ entries: [Entry], at start: UInt64, comment: [UInt8]) -> [UInt8] {
        var out = ByteWriter()
        for entry in entries {
            let needs64 = entry.offset >= 0xFFFF_FFFF
            out.u32(0x0201_4B50)
            out.u16(0x031E)  // made by Unix, zip 3.0
            out.u16(needs64 ? 45 : 20)
            out.u16(0x0800)
            out.u16(0)
            out.u16(dosTime)
            out.u16(dosDate)
            out.u32(entry.crc)
            out.u32(UInt32(entry.size))
            out.u32(UInt32(entry.size))
            out.u16(UInt16(entry.name.count))
            out.u16(needs64 ? 12 : 0)
            out.u16(0)
            out.u16(0)
            out.u16(0)
            out.u32(0o100644 << 16)
            out.u32(needs64 ? 0xFFFF_FFFF : UInt32(entry.offset))
            out.bytes += entry.name
            if needs64 {
                out.u16(0x0001)
                out.u16(8)
                out.u64(entry.offset)
            }
        }
        let size = UInt64(out.bytes.count)
        let count = UInt64(entries.count)
        if count >= 0xFFFF || start >= 0xFFFF_FFFF || size >= 0xFFFF_FFFF {
            let record = start + size
            out.u32(0x0606_4B50)
            out.u64(44)
            out.u16(0x031E)
            out.u16(45)
            out.u32(0)
            out.u32(0)
            out.u64(count)
            out.u64(count)
            out.u64(size)
            out.u64(start)
            out.u32(0x0706_4B50)
            out.u32(0)
            out.u64(record)
            out.u32(1)
        }
        out.u32(0x0605_4B50)
        out.u16(0)
        out.u16(0)
        out.u16(UInt16(min(count, 0xFFFF)))
        out.u16(UInt16(min(count, 0xFFFF)))
        out.u32(UInt32(min(size, 0xFFFF_FFFF)))
        out.u32(UInt32(min(start, 0xFFFF_FFFF)))
        out.u16(UInt16(comment.count))
        out.bytes += comment
        return out.bytes
    }

    /// The build key a finished archive holds as its comment (its `CompletionRecord`), or nil when the file is not
    /// a whole zip.
    static func buildKey(ofArchive path: String) -> String? {
        guard let file = try? CFile(path: path, mode: "rb"), let total = try? file.size(), total >= 22 else { return nil }
        let tail = min(total, 22 + 0xFFFF)
        guard (try? file.seek(to: total - tail)) != nil, let bytes = try? file.read(tail), bytes.count == tail else {
            return nil
        }
        return ZipArchive.endRecord(in: bytes).map { String(decoding: bytes[($0 + 22)...], as: UTF8.self) }
    }

    /// Reads the local headers of a partial zip from the start, keeping every entry whose data is all there;
    /// returns them and the offset where the first incomplete one begins.
    private static func completeEntries(of path: String) throws -> ([Entry], UInt64) {
        let local = try ZipArchive.localEntries(of: PositionedInput(.file(path: path)))
        let complete = local.prefix { $0.end != nil }
        let entries = complete.map {
            Entry(name: $0.name, crc: $0.crc, size: UInt64($0.storedSize), offset: UInt64($0.offset))
        }
        return (entries, UInt64(complete.last?.end ?? 0))
    }
}
