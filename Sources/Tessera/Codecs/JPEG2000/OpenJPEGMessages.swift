import COpenJPEG
import Foundation

/// Where an OpenJPEG codec's error messages go instead of stderr: kept, for the `TesseraError` thrown when a call
/// fails. Warnings and information are dropped.
final class OpenJPEGMessages {
    private(set) var errors: [String] = []

    /// Installs the handlers on `codec`; the codec must not outlive this object.
    func attach(to codec: UnsafeMutablePointer<opj_codec_t?>) {
        let onError: opj_msg_callback = { message, context in
            guard let message, let context else { return }
            Unmanaged<OpenJPEGMessages>.fromOpaque(context).takeUnretainedValue().errors
                .append(String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let ignore: opj_msg_callback = { _, _ in }
        opj_set_error_handler(codec, onError, Unmanaged.passUnretained(self).toOpaque())
        opj_set_warning_handler(codec, ignore, nil)
        opj_set_info_handler(codec, ignore, nil)
    }

    func clear() { errors = [] }

    /// OpenJPEG's first message, as a clause to append (`: ...`), or nothing.
    var firstMessage: String {
        errors.first.map { ": " + ($0.hasSuffix(".") ? String($0.dropLast()) : $0) } ?? ""
    }
}
