import CZlib
import Foundation
import Testing
@testable import Tessera

/// Zips read back: the container's own, Zip64 ones, deflated entries as zip tools write them, and damaged ones.
@Suite struct ZipArchiveTests {
    /// A zip written by `ZipContainer` with `files`, and its path.
    private func containerZip(_ files: [(String, [UInt8])], in folder: String) throws -> String {
        let path = folder + "/p.zip"
        let zip = try ZipContainer(path: path, partial: .discard, buildKey: "key")
        for (name, bytes) in files { try zip.write(bytes, to: name) }
        try zip.commit()
        return path
    }

    /// A zip of `files` deflated (method 8, raw deflate), laid out as zip tools write one: local headers and data,
    /// then the central directory and its end record.
    private func deflatedZip(_ files: [(String, [UInt8])]) -> [UInt8] {
        var out = ByteWriter(), directory = ByteWriter()
        for (name, bytes) in files {
            var stream = z_stream()
            deflateInit2_(&stream, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                          Int32(MemoryLayout<z_stream>.size))
            var deflated = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
            bytes.withUnsafeBufferPointer { input in
                deflated.withUnsafeMutableBufferPointer { output in
                    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                    stream.avail_in = uInt(input.count)
                    stream.next_out = output.baseAddress
                    stream.avail_out = uInt(output.count)
                    _ = deflate(&stream, Z_FINISH)
                }
            }
            deflated.removeLast(deflated.count - Int(stream.total_out))
            deflateEnd(&stream)
            let crc = bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
            let offset = out.bytes.count
            out.u32(0x0403_4B50); out.u16(20); out.u16(0); out.u16(8); out.u32(0); out.u32(crc)
            out.u32(UInt32(deflated.count)); out.u32(UInt32(bytes.count)); out.u16(UInt16(name.utf8.count)); out.u16(0)
            out.bytes += Array(name.utf8) + deflated
            directory.u32(0x0201_4B50); directory.u16(20); directory.u16(20); directory.u16(0); directory.u16(8)
            directory.u32(0); directory.u32(crc); directory.u32(UInt32(deflated.count)); directory.u32(UInt32(bytes.count))
            directory.u16(UInt16(name.utf8.count)); directory.u16(0); directory.u16(0); directory.u16(0); directory.u16(0)
            directory.u32(0); directory.u32(UInt32(offset))
            directory.bytes += Array(name.utf8)
        }
        let start = out.bytes.count
        out.bytes += directory.bytes
        out.u32(0x0605_4B50); out.u16(0); out.u16(0); out.u16(UInt16(files.count)); out.u16(UInt16(files.count))
        out.u32(UInt32(directory.bytes.count)); out.u32(UInt32(start)); out.u16(0)
        return out.bytes
    }

    @Test func theContainersZipReadsBackEntryForEntry() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = [("p/info.json", Array("{}".utf8)), ("p/0,0,256,256/256,/0/default.jpg", (0..<5000).map { UInt8($0 % 251) }),
                     ("p/empty", [])]
        let archive = try ZipArchive(input: .file(path: try containerZip(files, in: folder)), budget: .default)
        #expect(archive.entries.count == 3)
        for (name, bytes) in files { #expect(try archive.data(of: name) == bytes, "\(name)") }
        #expect(try archive.data(of: "p/missing.jpg") == nil)
        #expect(ZipContainer.buildKey(ofArchive: folder + "/p.zip") == "key")
    }

    /// Past 65,535 entries the container writes Zip64 end records, which give the real count.
    @Test func aZip64ArchiveListsEveryEntry() throws {
        let folder = try TestImages.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = (0..<70_000).map { ("t/\($0).jpg", [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)]) }
        let path = try containerZip(files, in: folder)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.count > 22 && bytes[(bytes.count - 25)...].starts(with: [0x50, 0x4B, 0x05, 0x06, 0, 0, 0, 0, 0xFF, 0xFF]),
                "the end record defers to the Zip64 one")
        let archive = try ZipArchive(input: .file(path: path), budget: .default)
        #expect(archive.entries.count == 70_000)
        for index in [0, 65_535, 65_536, 69_999] { #expect(try archive.data(of: "t/\(index).jpg") == files[index].1) }
    }

    @Test func deflatedEntriesAreInflated() throws {
        let text = Array(String(repeating: "<Image TileSize=\"254\"/>", count: 50).utf8)
        let zip = deflatedZip([("a.dzi", text), ("b", [1, 2, 3])])
        let archive = try ZipArchive(input: .bytes(zip, name: "d.zip"), budget: .default)
        #expect(try archive.data(of: "a.dzi") == text)
        #expect(try archive.data(of: "b") == [1, 2, 3])
    }

    /// The directory (read and indexed, twice its bytes) and each entry (as stored and inflated) fit the budget.
    @Test func theDirectoryAndEachEntryFitTheBudget() throws {
        let text = Array(String(repeating: "0123456789", count: 30).utf8)
        let zip = deflatedZip([("a", text), ("b", [1, 2, 3])])
        let directory = 2 * (46 + 1)
        #expect(throws: TesseraError.memoryLimit(path: "d.zip", needed: 2 * directory, limit: directory,
                                                 purpose: "the zip's directory, read and indexed")) {
            try ZipArchive(input: .bytes(zip, name: "d.zip"), budget: MemoryBudget(limit: directory))
        }
        let archive = try ZipArchive(input: .bytes(zip, name: "d.zip"), budget: MemoryBudget(limit: 2 * directory))
        #expect(try archive.data(of: "b") == [1, 2, 3])
        #expect(throws: TesseraError.self) { try archive.data(of: "a") }
    }

    @Test func damagedArchivesAreTypedErrorsNamingTheFile() throws {
        let good = deflatedZip([("a", Array(repeating: 7, count: 3000)), ("b", Array(repeating: 9, count: 3000))])
        func failure(_ bytes: [UInt8], reading entry: String? = nil) -> TesseraError? {
            do {
                let archive = try ZipArchive(input: .bytes(bytes, name: "x.zip"), budget: .default)
                if let entry { _ = try archive.data(of: entry) }
                return nil
            } catch let error as TesseraError {
                return error
            } catch {
                return nil
            }
        }
        let cut = failure(Array(good.prefix(good.count - 10)))
        #expect(cut?.description == "x.zip: corrupt data: no zip end record (the file is cut short, or not a zip)")
        var outside = good
        outside[outside.count - 3] = 0x7F  // the directory's offset, past the end
        #expect(failure(outside)?.description == "x.zip: truncated before the end of its zip directory")
        var flipped = good
        flipped[33] ^= 0x55  // inside a's deflated data
        #expect(failure(flipped, reading: "a").map { "\($0)".hasPrefix("x.zip/a: corrupt data: ") } == true)
        var encrypted = good
        let directory = good.count - 22 - 2 * 47
        encrypted[directory + 8] |= 1
        #expect(failure(encrypted, reading: "a")?.description == "x.zip/a: unsupported: an encrypted zip entry")
        var method = good
        method[directory + 10] = 12  // bzip2
        #expect(failure(method, reading: "a")?.description == "x.zip/a: unsupported: zip compression method 12")
        TestImages.damagedCopies(of: good) { damaged, label in
            do {
                let archive = try ZipArchive(input: .bytes(damaged, name: "x.zip"), budget: .default)
                for name in archive.entries.keys { _ = try archive.data(of: name) }
            } catch let error as TesseraError {
                #expect("\(error)".hasPrefix("x.zip"), "\(label)")
            } catch {
                Issue.record("\(label): \(error)")
            }
        }
    }
}
