import Foundation

/// Runs the chosen target: under libFuzzer's driver in a fuzzing build, over saved inputs otherwise.
enum FuzzDriver {
    /// The target libFuzzer's callback feeds; set once, before the driver starts.
    nonisolated(unsafe) static var target: FuzzTarget?

    /// libFuzzer's per-input callback: errors are the expected answer to bad input; only traps are findings.
    static let callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { start, count in
        let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        _ = try? FuzzDriver.target?.run(bytes)
        return 0
    }

    #if FUZZING
    /// Hands the command line (less the target's name) to libFuzzer.
    static func run(arguments: [String]) -> Int32 {
        var pointers = arguments.map { strdup($0) } + [nil]
        var count = CInt(arguments.count)
        return pointers.withUnsafeMutableBufferPointer { buffer in
            var argv = buffer.baseAddress!
            return LLVMFuzzerRunDriver(&count, &argv, callback)
        }
    }
    #else
    /// Feeds every file named, and every file in every folder named, to the target once.
    static func run(arguments: [String]) -> Int32 {
        var files: [String] = []
        for path in arguments.dropFirst() {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("tessera-fuzz: \(path): no such file or directory\n".utf8))
                return 1
            }
            if isFolder.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        for file in files {
            let bytes = Array(FileManager.default.contents(atPath: file) ?? Data())
            _ = bytes.withUnsafeBufferPointer { callback($0.baseAddress, $0.count) }
        }
        print("\(target?.name ?? "?"): \(files.count) inputs, none trapped")
        return 0
    }
    #endif
}

#if FUZZING
/// libFuzzer's entry point for programs with a main of their own (libclang_rt.fuzzer_no_main).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif
