import Foundation
import Tessera

/// IIIF Presentation API 3.0 documents for what the server holds, for the viewers that open manifests rather than
/// image services (Mirador, the Universal Viewer): a Manifest per image, one Canvas of the image's size painted by
/// the image through its Image API service, and a Collection per folder of the catalog, listing its subfolders'
/// Collections and its images' Manifests.
enum IIIFPresentation {
    static let context = "http://iiif.io/api/presentation/3/context.json"
    /// The content type the documents are served with.
    static let contentType = "application/ld+json;profile=\"\(context)\""
    /// The name of an image's Manifest and of a folder's Collection after their base URIs.
    static let manifestName = "manifest.json", collectionName = "collection.json"

    /// Where the image `identifier`'s Manifest is, after the service's prefix.
    static func manifestPath(of identifier: String) -> String {
        "/" + ImageCatalog.pathSegment(of: identifier) + "/" + manifestName
    }

    /// Where the Collection of `folder` of the catalog ("" for its root) is, after the service's prefix.
    static func collectionPath(of folder: String) -> String {
        (folder.isEmpty ? "" : "/" + ImageCatalog.pathSegment(of: folder)) + "/" + collectionName
    }

    /// One entry of a Collection: a folder's Collection or an image's Manifest, at `id`, named `label`.
    struct Item {
        enum Kind: String { case collection = "Collection", manifest = "Manifest" }
        var kind: Kind
        var id: String
        var label: String
    }

    /// The Manifest of the image whose Image API service's base URI is `service`: labelled `label`, a Canvas of
    /// `size` pixels, and its thumbnail as the server's own pages ask for it (`IIIFRequest.thumbnail`).
    static func manifest(service: String, label: String, size: Tessera.Size, limits: IIIFLimits) -> [UInt8] {
        let thumbnail = IIIFRequest.thumbnail(of: size, limits: limits)
        let canvas = service + "/canvas/1"
        let imageService: [[String: Any]] = [["id": service, "type": "ImageService3", "profile": "level2"]]
        func image(_ size: Tessera.Size, request: String) -> [String: Any] {
            ["id": "\(service)/full/\(request)/0/default.jpg", "type": "Image", "format": "image/jpeg",
             "width": size.width, "height": size.height, "service": imageService]
        }
        let painting: [String: Any] = [
            "id": canvas + "/page/1/image", "type": "Annotation", "motivation": "painting",
            "body": image(size, request: "max"), "target": canvas,
        ]
        return document([
            "id": service + "/" + manifestName, "type": "Manifest", "label": languageMap(label),
            "thumbnail": [image(thumbnail.size, request: thumbnail.request)],
            "items": [[
                "id": canvas, "type": "Canvas", "width": size.width, "height": size.height,
                "items": [["id": canvas + "/page/1", "type": "AnnotationPage", "items": [painting]]],
            ]],
        ])
    }

    /// The Collection at `id`, labelled `label`, of `items` in order.
    static func collection(id: String, label: String, items: [Item]) -> [UInt8] {
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
