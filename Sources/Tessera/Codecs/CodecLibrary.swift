import CCodecShims

/// A codec library opened on its first use rather than linked (CCodecShims' `*_library.c`), so that a command
/// loads only the codecs it reads or writes: linked, libtiff, libwebp, OpenJPEG and libxml2 and the libraries they
/// need cost every command's start about 2 ms.
public enum CodecLibrary: CaseIterable, Sendable {
    case tiff, webp, webpDemux, openJPEG, xml2

    /// Opens every codec library that can be loaded, for a long-running process (`serve`) whose first requests
    /// should not pay for opening them (libtiff and what it needs: about a millisecond); one that cannot be loaded
    /// is reported where it is first used.
    public static func openAll() {
        for library in allCases { _ = try? library.require() }
    }

    /// Opens the library unless done already; call it before the first of its functions. Throws
    /// `TesseraError.missingLibrary` naming the library and its Debian package when it cannot be loaded.
    public func require() throws {
        let (failure, purpose, package): (UnsafePointer<CChar>?, String, String) = switch self {
        case .tiff: (tessera_tiff_load(), "TIFF needs libtiff", "libtiff6")
        case .webp: (tessera_webp_load(), "WebP needs libwebp", "libwebp7")
        case .webpDemux: (tessera_webp_demux_load(), "WebP needs libwebpdemux", "libwebpdemux2")
        case .openJPEG: (tessera_openjpeg_load(), "JPEG 2000 needs OpenJPEG", "libopenjp2-7")
        case .xml2: (tessera_xml2_load(), "Deep Zoom descriptors need libxml2", "libxml2")
        }
        if let failure {
            throw TesseraError.missingLibrary(detail: String(cString: failure), purpose: purpose, package: package)
        }
    }
}
