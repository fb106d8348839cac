import Foundation
import Synchronization
import Tessera

/// The targets' temporary files, under one folder per process that is removed at exit (`root`): for the `zip`
/// and `entropy-index` targets, a 200 x 136 baseline JPEG (4:2:0, no restart markers) with the genuine entropy
/// index that fuzzed ones perturb, and the archives they write.
enum FuzzScratch {
    /// The process's folder; `FuzzSite` puts its served folder in it too.
    static let root = NSTemporaryDirectory() + "tessera-fuzz-\(getpid())"

    /// Removes `root` and everything in it (registered with `atexit`, which libFuzzer's exit runs).
    static func removeRoot() { try? FileManager.default.removeItem(atPath: root) }

    struct Files: Sendable {
        let folder: String
        let jpeg: String
        let indexFolder: String
        /// The genuine index of `jpeg`, in its file format.
        let index: [UInt8]
    }

    private static let files = Mutex<Files?>(nil)

    static func shared() throws -> Files {
        try files.withLock { files in
            if let files { return files }
            let folder = root + "/files"
            try FileManager.default.createDirectory(atPath: folder + "/index", withIntermediateDirectories: true)
            let jpeg = folder + "/photo.jpg"
            let samples = (0..<200 * 136 * 3).map { UInt8(truncatingIfNeeded: $0 * 7 / 5 + $0 / 600) }
            let image = ImageBuffer(width: 200, height: 136, format: .rgb8, bytes: samples)
            try ImageWriter.write(BufferReader(image), to: jpeg)
            let index = try JPEGEntropyIndex.build(input: .file(path: jpeg), key: JPEGEntropyIndex.Key(path: jpeg))
            let made = Files(folder: folder, jpeg: jpeg, indexFolder: folder + "/index", index: index.encoded())
            files = made
            return made
        }
    }
}
