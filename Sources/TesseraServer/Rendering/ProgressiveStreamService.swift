import Foundation
import Tessera

/// `GET /stream/{identifier}/{size}`: the image with its longer side at most `size` pixels (`max`: full size,
/// within `maxArea`), as a progressive JPEG sent while libjpeg encodes it, with chunked transfer encoding. The
/// image is rendered first (shrink-on-load, box, Lanczos3, EXIF orientation: `Thumbnailer`); then its coarse first
/// scans leave as soon as they are encoded, so a client can show the whole picture, blurred, before the last
/// scan exists. Identifiers are those of the IIIF service, slashes written %2F.
public struct ProgressiveStreamService: Sendable {
    /// The path every request this service answers starts with.
    public static let prefix = "/stream/"

    public let catalog: ImageCatalog
    /// The memory renders hold, shared with the IIIF service: a stream holds its part until its last byte is out.
    public let budget: RenderBudget
    /// JPEG quality, 1-100.
    public var quality = 85
    /// The most pixels an image may be streamed at.
    public var maxArea = 25_000_000

    /// A service streaming the images of `catalog`, its renders within `budget`.
    public init(catalog: ImageCatalog, budget: RenderBudget) {
        self.catalog = catalog
        self.budget = budget
    }

    /// Answers one request whose path starts with `prefix`.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response = respond(to: request)
        response.headers.append(("Access-Control-Allow-Origin", "*"))
        return response
    }

    private func respond(to request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            return HTTPResponse(status: 405, headers: [("Allow", "GET, HEAD")], body: Array("method not allowed\n".utf8))
        }
        let segments = request.path.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count == 2, let identifier = segments[0].percentDecoded,
              let path = catalog.file(for: identifier)?.path else {
            return .text(404, "not found: expected \(Self.prefix){identifier}/{size in pixels, or max}")
        }
        let source: ImageSource
        do {
            source = try ImageSource(path: path)
        } catch {
            return .failure(error, about: identifier)
        }
        let longer = max(source.properties.width, source.properties.height)
        let size = segments[1] == "max" ? longer : Int(segments[1]) ?? 0
        guard size > 0 else { return .text(400, "the size must be a number of pixels or max, not '\(segments[1])'") }
        let thumbnailer = Thumbnailer(options: .init(size: .maxPixelSize(min(size, longer))))
        let outputSize = thumbnailer.plan(for: source.properties).outputSize
        guard outputSize.area <= maxArea else {
            return .text(400, "at most \(maxArea.grouped) pixels can be streamed")
        }
        let image: ImageBuffer, reservation: RenderBudget.Reservation
        do {
            reservation = try budget.reserve(Self.workingSet(output: outputSize, of: source.properties))
            image = try thumbnailer.thumbnail(of: source)
        } catch let refusal as RenderRefusal {
            return refusal.response
        } catch {
            return .failure(error, about: identifier)
        }
        var options = EncodeOptions()
        options.quality = quality
        options.progressive = true
        let headers = [("Content-Type", "image/jpeg"), ("Cache-Control", "no-store")]
        if request.method == "HEAD" { return HTTPResponse(status: 200, headers: headers) }
        let encoding = options
        return HTTPResponse(status: 200, headers: headers, stream: HTTPBodyStream { stream in
            defer { reservation.release() }
            var disconnected = false
            try JPEGStreamingEncoder.encode(image, options: encoding, name: identifier) { bytes in
                do { try stream.write(bytes) } catch { disconnected = true }
                return !disconnected
            }
        })
    }

    /// The memory a stream holds at its peak, in bytes, estimated: the decoder's and the thumbnailer's rows of the
    /// source, the image (and its 8-bit copy), libjpeg's coefficients of a progressive JPEG (1.5 samples a pixel at
    /// 4:2:0, 2 bytes each) and the body's buffer.
    static func workingSet(output: Size, of properties: ImageProperties) -> Int {
        let bytesPerPixel = 4 * max(1, properties.bitDepth / 8)
        return properties.width * bytesPerPixel * 80 + output.area * (2 * bytesPerPixel + 3) + (256 << 10)
    }
}
