import Foundation

extension TesseraError {
    /// The `io` error of a failed system call on `path`: the C library's message for `code` (by default `errno` as
    /// the call's arguments are evaluated: a caller that cleans up first passes the errno it kept), in lower case,
    /// after `action` when given: `out.tif: write failed: no space left on device`.
    public static func io(path: String, action: String? = nil, code: Int32 = errno) -> TesseraError {
        let message = String(cString: strerror(code)).lowercased()
        return .io(path: path, detail: action.map { "\($0): \(message)" } ?? message)
    }
}
