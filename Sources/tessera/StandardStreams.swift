import Foundation
import Tessera

/// `-` as a command's IN or OUT, for pipes: standard input read whole (within `--memory-limit`) as the image, and
/// the image written to standard output once it is complete, in the format `--format` names. A failed or
/// interrupted run writes nothing to standard output and leaves no temporary file.
enum StandardStreams {
    /// What a command line writes for standard input or output.
    static let dash = "-"
    /// How messages name standard input.
    static let inputName = "standard input"
    /// What the help of a command that reads one image and writes one says of `-`.
    static let help = "IN - reads the image from standard input (whole, within --memory-limit); OUT - writes it to "
        + "standard output once complete, in the format --format names."

    /// The format written to standard output, by the extension a file of it would have (the extension also picks
    /// JPEG 2000's kind: `jp2`, HTJ2K's `jph`, a bare codestream `j2c`).
    static let format = Option("format", ValueKind.choice(
        ["jpg", "png", "webp", "tif", "jp2", "jph", "j2c"].map { (name: $0, value: $0) },
        aliases: [("jpeg", "jpg"), ("tiff", "tif")]).optional, "the format written to standard output when OUT is -")

    /// Refuses `-` more than once among a command's inputs: standard input is read once.
    static func requireReadOnce(_ inputs: [String]) throws {
        if inputs.filter({ $0 == dash }).count > 1 { throw UsageError("standard input (-) is read once") }
    }

    /// Refuses `-` among a `tile`'s inputs: a pyramid reads its input as needed, several times over for a large one,
    /// and resumes by its file, where standard input is read once and whole.
    static func refuseInputForTiling(_ inputs: [String]) throws {
        if inputs.contains(dash) {
            throw UsageError("standard input (-) is not an input here: a pyramid reads its input as needed and "
                             + "resumes by its file; save the image to a file, or give its URL")
        }
    }

    /// The image `path` names: standard input for `-`, read whole within `budget`, else the file or URL.
    static func source(_ path: String, budget: MemoryBudget) throws -> ImageSource {
        guard path == dash else { return try ImageSource(path: path, budget: budget) }
        if isatty(STDIN_FILENO) == 1 {
            throw UsageError("- is standard input, which is a terminal here: pipe or redirect an image into it")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(STDIN_FILENO, &chunk, chunk.count)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw TesseraError.io(path: inputName)
            }
            try budget.check(bytes.count + count, for: "the piped image, read whole (a file is read as needed)",
                             path: inputName)
            bytes += chunk[..<count]
        }
        return try ImageSource(bytes: bytes, name: inputName, budget: budget)
    }

    /// Where a command writes its one image: a file, its extension naming the format, or standard output (`-`), in
    /// the format `--format` names. Checked when made, before the input is read.
    struct Output {
        /// OUT as the command line gives it.
        let out: String
        /// The format written.
        let format: ImageFormat
        /// For standard output, the extension of the temporary file written first (it picks JPEG 2000's kind).
        private let fileExtension: String?

        init(_ out: String, _ arguments: Arguments) throws {
            self.out = out
            guard out == dash else {
                if arguments.isGiven(StandardStreams.format) {
                    throw UsageError("--format is for OUT -: a file's extension names its format")
                }
                format = try ImageWriter.format(forPath: out)
                fileExtension = nil
                return
            }
            guard let fileExtension = arguments[StandardStreams.format] else {
                throw UsageError("OUT is - (standard output): name its format with --format")
            }
            if isatty(STDOUT_FILENO) == 1 {
                throw UsageError("- is standard output, which is a terminal here: pipe or redirect it")
            }
            format = try ImageWriter.format(forPath: "image." + fileExtension)
            self.fileExtension = fileExtension
        }

        /// Streams `reader` into the encoder with a progress line.
        func write(_ reader: any ImageReader, options: EncodeOptions) throws {
            let progress = Progress("writing " + (fileExtension == nil ? out : "to standard output"))
            defer { progress.finish() }
            try write { path in
                try ImageWriter.write(reader, to: path, format: format, options: options) { done, total in
                    progress.update(done, of: total)
                }
            }
        }

        /// Writes the image: `write` is given the path to write it to, for standard output a temporary file sent
        /// there once `write` has finished it (and removed, whether or not it was).
        private func write(_ write: (String) throws -> Void) throws {
            guard let fileExtension else { return try write(out) }
            let folder = FileManager.default.temporaryDirectory.path
            var template = Array("\(folder)/tessera-stdout-XXXXXX.\(fileExtension)".utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer {
                mkstemps($0.baseAddress!, Int32(fileExtension.utf8.count + 1))
            }
            guard descriptor >= 0 else {
                throw TesseraError.io(path: folder, action: "cannot create a temporary file")
            }
            close(descriptor)
            let path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
            TemporaryFiles.shared.insert(path)
            defer {
                unlink(path)
                TemporaryFiles.shared.remove(path)
            }
            try write(path)
            try copyToStandardOutput(path)
        }
    }

    /// Sends the file at `path` to standard output; a closed pipe is an error, not a signal.
    private static func copyToStandardOutput(_ path: String) throws {
        signal(SIGPIPE, SIG_IGN)
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? file.close() }
        while let data = try file.read(upToCount: 1 << 16), !data.isEmpty {
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Foundation.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw TesseraError.io(path: "standard output", action: "write failed")
                    }
                    offset += written
                }
            }
        }
    }
}
