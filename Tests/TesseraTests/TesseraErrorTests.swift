import Foundation
import Testing
@testable import Tessera

/// A failed system call's error names the path, what was being done, and the C library's message for its errno,
/// taken where the error is made (not after later calls changed errno).
@Test func systemCallErrorsNameThePathTheActionAndTheCause() throws {
    let missing = "/nonexistent-\(getpid())/file.jpg"
    #expect(open(missing, O_RDONLY) == -1)
    #expect(TesseraError.io(path: missing).description == "\(missing): no such file or directory")
    #expect(TesseraError.io(path: "out.tif", action: "write failed", code: ENOSPC).description
            == "out.tif: write failed: no space left on device")
    // Through a real reader: the file's error, not a later one.
    #expect(throws: TesseraError.io(path: missing, detail: "no such file or directory")) {
        try PositionedInput(.file(path: missing))
    }
}
