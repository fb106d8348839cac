import Foundation

/// IIIF Presentation API 3.0 documents, for the viewers that open manifests rather than image services (Mirador,
/// the Universal Viewer): an image's Manifest, one Canvas of the image's size painted by the image through its
/// Image API service, and a Collection of Manifests and Collections. `tessera serve` answers with them for what it
/// serves; a static IIIF level-0 folder (`IIIFLayout`) holds its image's Manifest.
public enum IIIFPresentation {
    /// The JSON-LD context every document names.
    public static let context = "http://iiif.io/api/presentation/3/context.json"
    /// The content type the documents are sent with.
    public static let contentType = "application/ld+json;profile=\"\(context)\""
    /// The name of an image's Manifest and of a folder's Collection after their base URIs.
    public static let manifestName = "manifest.json", collectionName = "collection.json"

    /// A picture of the whole image that its service gives: its request below the service's base URI
    /// (`full/max/0/default.jpg`), its size in pixels and its media type.
    public struct ContentResource: Sendable, Equatable {
        public var request: String
        public var size: Size
        public var mediaType: String

        /// The picture at `request` below the service, of `size` pixels, in `format`.
        public init(request: String, size: Size, format: TileFormat) {
            self.request = request
            self.size = size
            mediaType = format.mediaType
        }
    }

    /// One entry of a Collection: a folder's Collection or an image's Manifest, at `id`, named `label`.
    public struct Item: Sendable {
        public enum Kind: String, Sendable { case collection = "Collection", manifest = "Manifest" }
        public var kind: Kind
        public var id: String
        public var label: String

        /// An entry of `kind` at `id`, named `label`.
        public init(kind: Kind, id: String, label: String) {
            self.kind = kind
            self.id = id
            self.label = label
        }
    }

    /// The Manifest of the image whose Image API service, of compliance level `profile` (`level0`, `level2`), has
    /// the base URI `service`: labelled `label`, a Canvas of `size` pixels painted by `body`, and `thumbnail` (both
    /// given with the service, which viewers zoom through).
    public static func manifest(service: String, profile: String, label: String, size: Size, body: ContentResource,
                                thumbnail: ContentResource) -> [UInt8] {
        let canvas = service + "/canvas/1"
        let imageService: [[String: Any]] = [["id": service, "type": "ImageService3", "profile": profile]]
        func image(_ resource: ContentResource) -> [String: Any] {
            ["id": "\(service)/\(resource.request)", "type": "Image", "format": resource.mediaType,
             "width": resource.size.width, "height": resource.size.height, "service": imageService]
        }
        let painting: [String: Any] = [
            "id": canvas + "/page/1/image", "type": "Annotation", "motivation": "painting",
            "body": image(body), "target": canvas,
        ]
        return document([
            "id": service + "/" + manifestName, "type": "Manifest", "label": languageMap(label),
            "thumbnail": [image(thumbnail)],
            "items": [[
                "id": canvas, "type": "Canvas", "width": size.width, "height": size.height,
                "items": [["id": canvas + "/page/1", "type": "AnnotationPage", "items": [painting]]],
            ]],
        ])
    }

    /// The Collection at `id`, labelled `label`, of `items` in order.
    public static func collection(id: String, label: String, items: [Item]) -> [UInt8] {
        document([
            "id": id, "type": "Collection", "label": languageMap(label),
            "items": items.map { ["id": $0.id, "type": $0.kind.rawValue, "label": languageMap($0.label)] },
        ])
    }

    /// A label in no particular language, as Presentation 3.0 writes one.
    private static func languageMap(_ text: String) -> [String: [String]] { ["none": [text]] }

    /// `members` and the context, as pretty-printed JSON with sorted keys (the context first).
    private static func document(_ members: [String: Any]) -> [UInt8] {
        var object = members
        object["@context"] = context
        let data = (try? JSONSerialization.data(withJSONObject: object,
                                                options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Array(data) + [UInt8(ascii: "\n")]
    }
}
