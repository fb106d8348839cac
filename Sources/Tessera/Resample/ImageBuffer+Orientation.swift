/// Whole-buffer geometry for small images (thumbnails): applying an EXIF orientation and cropping.
extension ImageBuffer {
    /// The image as it should be displayed for EXIF `orientation` (1-8): 2 mirrors, 3 turns 180 degrees,
    /// 4 flips, 5 transposes, 6 turns 90 degrees clockwise, 7 transverses, 8 turns 90 degrees anticlockwise.
    /// Orientations 5-8 swap width and height. Other values return the image unchanged.
    public func oriented(exif orientation: Int) -> ImageBuffer {
        guard (2...8).contains(orientation) else { return self }
        let swaps = orientation >= 5
        let outWidth = swaps ? height : width, outHeight = swaps ? width : height
        var out = ImageBuffer(width: outWidth, height: outHeight, format: format)
        let pixelBytes = format.bytesPerPixel, sourceStride = bytesPerRow, targetStride = out.bytesPerRow
        let (w, h) = (outWidth, outHeight)
        bytes.withUnsafeBytes { source in
            out.bytes.withUnsafeMutableBytes { target in
                for y in 0..<h {
                    for x in 0..<w {
                        // The stored pixel shown at (x, y).
                        let (sx, sy): (Int, Int) = switch orientation {
                        case 2: (w - 1 - x, y)
                        case 3: (w - 1 - x, h - 1 - y)
                        case 4: (x, h - 1 - y)
                        case 5: (y, x)
                        case 6: (y, w - 1 - x)
                        case 7: (h - 1 - y, w - 1 - x)
                        default: (h - 1 - y, x)
                        }
                        (target.baseAddress! + y * targetStride + x * pixelBytes)
                            .copyMemory(from: source.baseAddress! + sy * sourceStride + sx * pixelBytes, byteCount: pixelBytes)
                    }
                }
            }
        }
        return out
    }

    /// A copy of the rectangle `rect`, which must lie inside the image.
    public func cropped(to rect: Rect) -> ImageBuffer {
        precondition(Rect(size).intersection(rect) == rect, "crop outside the image")
        var out = ImageBuffer(width: rect.width, height: rect.height, format: format)
        let rowBytes = out.bytesPerRow, skip = rect.x * format.bytesPerPixel
        bytes.withUnsafeBytes { source in
            out.bytes.withUnsafeMutableBytes { target in
                for row in 0..<rect.height {
                    (target.baseAddress! + row * rowBytes)
                        .copyMemory(from: source.baseAddress! + offset(ofRow: rect.y + row) + skip, byteCount: rowBytes)
                }
            }
        }
        return out
    }
}
