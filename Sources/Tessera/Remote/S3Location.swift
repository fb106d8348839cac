/// An object in an S3 bucket, as an `s3://bucket/key` URL names it.
public struct S3Location: Sendable, Equatable {
    public var bucket: String
    /// The object's key, unescaped (`scans/map 1.tif`).
    public var key: String

    public init(bucket: String, key: String) {
        self.bucket = bucket
        self.key = key
    }

    /// Parses `s3://bucket/key`; anything else, or a bucket name S3 would refuse, is an error naming the URL.
    public init(url: String) throws {
        guard url.lowercased().hasPrefix("s3://") else {
            throw TesseraError.invalidArgument("\(url): not an s3:// URL")
        }
        let path = url.dropFirst(5)
        guard let slash = path.firstIndex(of: "/"), path.index(after: slash) < path.endIndex else {
            throw TesseraError.invalidArgument("\(url): no object key (write s3://BUCKET/KEY)")
        }
        let bucket = String(path[..<slash])
        guard Self.isValidBucket(bucket) else {
            throw TesseraError.invalidArgument("\(url): \"\(bucket)\" is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens)")
        }
        self.init(bucket: bucket, key: String(path[path.index(after: slash)...]))
    }

    /// S3's rule for bucket names: 3 to 63 of `a-z 0-9 . -`, starting and ending with a letter or digit.
    static func isValidBucket(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func alphanumeric(_ byte: UInt8) -> Bool { (0x61...0x7a).contains(byte) || (0x30...0x39).contains(byte) }
        guard (3...63).contains(bytes.count), alphanumeric(bytes[0]), alphanumeric(bytes[bytes.count - 1]) else {
            return false
        }
        return bytes.allSatisfy { alphanumeric($0) || $0 == 0x2e || $0 == 0x2d }
    }

    /// Whether the bucket can be a host name under TLS: no dots (a dotted name would not match the wildcard
    /// certificate), so it is addressed virtual-hosted style; otherwise path style, as the AWS CLI does.
    var isVirtualHostable: Bool { !bucket.contains(".") }

    /// The key as a URL path, each byte outside RFC 3986's unreserved set (and `/`) percent-encoded: the form
    /// SigV4's canonical URI takes for S3, so the path sent is the path signed.
    var escapedKey: String {
        var escaped = ""
        for byte in key.utf8 {
            let unreserved = (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || (0x30...0x39).contains(byte)
                || [0x2d, 0x2e, 0x5f, 0x7e, 0x2f].contains(byte)
            escaped += unreserved ? String(UnicodeScalar(byte)) : "%" + hex(byte)
        }
        return escaped
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}
