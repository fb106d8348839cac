/// Every failure Tessera reports: each case names the file (or other subject) and what is wrong with it,
/// and its `description` is a one-line sentence for the user, e.g. `china.jpg: truncated after row 4,112 of 8,554`.
public enum TesseraError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened, read, written or renamed.
    case io(path: String, detail: String)
    /// The content matches no supported format.
    case unknownFormat(path: String)
    /// The data ends before the image does.
    case truncated(path: String, detail: String)
    /// The data is not a valid image of its format.
    case corrupt(path: String, detail: String)
    /// A valid image uses a feature Tessera does not handle.
    case unsupported(path: String, feature: String)
    /// Decoding would have to hold more than the memory budget allows.
    case memoryLimit(path: String, needed: Int, limit: Int, purpose: String)
    /// A URL gave no usable answer: unreachable, timed out, an error status, or changed while being read.
    case http(url: String, detail: String)
    /// A shared library opened on first use could not be loaded (libSDL2 for the viewer, libcurl for URLs): `detail`
    /// is the loader's message naming the library, `purpose` what needs it, `package` the Debian package to install.
    case missingLibrary(detail: String, purpose: String, package: String)
    /// A caller passed an argument that cannot work (a region outside the image, a bad scale).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case let .io(path, detail): return "\(path): \(detail)"
        case let .unknownFormat(path): return "\(path): not an image in a supported format (JPEG, PNG, TIFF, WebP, BMP, GIF, JPEG 2000, or a Deep Zoom .dzi or IIIF info.json pyramid, in a folder or a zip)"
        case let .truncated(path, detail): return "\(path): truncated \(detail)"
        case let .corrupt(path, detail): return "\(path): corrupt data: \(detail)"
        case let .unsupported(path, feature): return "\(path): unsupported: \(feature)"
        case let .memoryLimit(path, needed, limit, purpose):
            return "\(path): \(purpose) needs \(ByteCount(needed)), over the memory limit of \(ByteCount(limit))"
                + " (raise it with --memory-limit)"
        case let .http(url, detail): return "\(url): \(detail)"
        case let .missingLibrary(detail, purpose, package): return "\(detail) (\(purpose): apt-get install \(package))"
        case let .invalidArgument(message): return message
        }
    }
}

/// A byte count printed for people: `1.5 GiB`, `24 MiB`, `512 bytes`.
public struct ByteCount: CustomStringConvertible, Sendable {
    public let bytes: Int
    public init(_ bytes: Int) { self.bytes = bytes }

    public var description: String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) bytes" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) \(units[unit])" : "\(rounded) \(units[unit])"
    }
}

extension Int {
    /// The number with thousands separators, as messages print row counts: `4,112`.
    public var grouped: String {
        let digits = String(magnitude)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return self < 0 ? "-" + out : out
    }
}

extension Double {
    /// The number with `digits` decimals, rounded half away from zero: `1.5`, `0.125`. Formatting without
    /// Foundation's locale machinery keeps small commands from loading ICU (3.5 MiB of resident memory).
    public func fixed(_ digits: Int) -> String {
        guard isFinite else { return "\(self)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((Swift.abs(self) * scale).rounded())
        let whole = scaled / Int(scale), fraction = scaled % Int(scale)
        let sign = self < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + "\(whole)" }
        let decimals = String(fraction)
        return sign + "\(whole)." + String(repeating: "0", count: digits - decimals.count) + decimals
    }
}
