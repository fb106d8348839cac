import Tessera

/// Where the service's Presentation documents are, and an image's Manifest as the service makes it.
extension IIIFPresentation {
    /// Where the image `identifier`'s Manifest is, after the service's prefix.
    static func manifestPath(of identifier: String) -> String {
        "/" + ImageCatalog.pathSegment(of: identifier) + "/" + manifestName
    }

    /// Where the Collection of `folder` of the catalog ("" for its root) is, after the service's prefix.
    static func collectionPath(of folder: String) -> String {
        (folder.isEmpty ? "" : "/" + ImageCatalog.pathSegment(of: folder)) + "/" + collectionName
    }

    /// The Manifest of the image of `size` pixels whose level-2 service's base URI is `service`, labelled `label`:
    /// painted by the image at full size, its thumbnail as the server's own pages ask for it
    /// (`IIIFRequest.thumbnail`).
    static func manifest(service: String, label: String, size: Tessera.Size, limits: IIIFLimits) -> [UInt8] {
        let thumbnail = IIIFRequest.thumbnail(of: size, limits: limits)
        return manifest(service: service, profile: "level2", label: label, size: size,
                        body: ContentResource(request: "full/max/0/default.jpg", size: size, format: .jpeg),
                        thumbnail: ContentResource(request: "full/\(thumbnail.request)/0/default.jpg", size: thumbnail.size,
                                                   format: .jpeg))
    }
}
