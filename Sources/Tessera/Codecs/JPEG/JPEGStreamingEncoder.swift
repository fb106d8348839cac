import CCodecShims
import CJPEG

/// Encodes an image as JPEG and hands the bytes out as libjpeg produces them, a buffer at a time, instead of
/// collecting the file: for a progressive JPEG, the first scans can be on their way to a client while libjpeg is
/// still encoding the last ones.
public enum JPEGStreamingEncoder {
    /// Encodes `image` (converted to 8-bit gray or RGB) with `options` (quality, progressive, subsampling),
    /// calling `write` with each `chunkSize` bytes of output (the last piece shorter). `write` returns false to
    /// stop, which ends the encode with `TesseraError.io`.
    public static func encode(_ image: ImageBuffer, options: EncodeOptions, chunkSize: Int = 16 * 1024, name: String,
                              write: (UnsafeRawBufferPointer) -> Bool) throws {
        let format = JPEGEncoder.acceptedFormat(for: image.format, options: options)
        let pixels = format == image.format ? image
            : try FormatConvertingReader(source: BufferReader(image), format: format).readAll(budget: options.budget,
                                                                                                name: name)
        try withoutActuallyEscaping(write) { write in
            let sink = Sink(write: write)
            let context = Unmanaged.passUnretained(sink).toOpaque()
            guard let destination = tessera_jpeg_callback_destination_create(max(512, chunkSize), { context, bytes, count in
                let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
                return sink.write(UnsafeRawBufferPointer(start: bytes, count: count)) ? 1 : 0
            }, context) else { throw TesseraError.io(path: name, detail: "out of memory") }
            defer { tessera_jpeg_callback_destination_destroy(destination) }
            try withExtendedLifetime(sink) {
                try JPEGEncoder.encode(pixels, options: options, name: name) { info in
                    tessera_jpeg_callback_destination_attach(destination, info)
                }
            }
        }
    }

    /// The closure the C callback reaches through its context pointer.
    private final class Sink {
        let write: (UnsafeRawBufferPointer) -> Bool
        init(write: @escaping (UnsafeRawBufferPointer) -> Bool) { self.write = write }
    }
}
