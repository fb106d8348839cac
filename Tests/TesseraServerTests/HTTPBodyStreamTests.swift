import Foundation
import Synchronization
import Testing
import Tessera
@testable import TesseraServer

/// A progressive JPEG streamed through `HTTPBodyStream` as `ProgressiveStreamService` streams it, read the way
/// libmicrohttpd reads it.
@Suite struct HTTPBodyStreamTests {
    /// 1024x768 of noise: about a megabyte of JPEG, far more than the stream buffers.
    static let noise: ImageBuffer = {
        var image = ImageBuffer(width: 1024, height: 768, format: .rgb8)
        var state: UInt32 = 12_345
        for index in image.bytes.indices {
            state = state &* 1_664_525 &+ 1_013_904_223
            image.bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
        return image
    }()

    /// Starts streaming the noise image as a progressive JPEG into a stream of `capacity` bytes; `finished` is set
    /// once libjpeg has written its last byte.
    static func start(capacity: Int, finished: Flag) -> HTTPBodyStream {
        HTTPBodyStream(capacity: capacity) { [finished] stream in
            var options = EncodeOptions()
            options.progressive = true
            var disconnected = false
            try JPEGStreamingEncoder.encode(noise, options: options, name: "noise") { bytes in
                do { try stream.write(bytes) } catch { disconnected = true }
                return !disconnected
            }
            finished.set()
        }
    }

    @Test func firstScanIsReadBeforeTheLastIsEncoded() throws {
        let finished = Flag()
        let stream = Self.start(capacity: 32 * 1024, finished: finished)
        var body: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        var finishedAtFirstScan: Bool?
        while true {
            let (count, failed) = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
            #expect(!failed)
            guard let count else { break }
            body += buffer[..<count]
            if finishedAtFirstScan == nil, Self.startsOfScan(in: body) >= 2 {
                // The first scan is complete here; the encoder, at most the stream's capacity and one libjpeg
                // buffer ahead of this reader, cannot have finished a file this much larger.
                finishedAtFirstScan = finished.isSet
            }
        }
        #expect(finishedAtFirstScan == false)
        #expect(body.count > 200_000)
        let decoded = try ImageSource(bytes: body).makeReader().readAll()
        #expect(decoded.size == Self.noise.size)
    }

    @Test func aReaderThatLeavesReleasesTheProducer() throws {
        let finished = Flag()
        let stream = Self.start(capacity: 16 * 1024, finished: finished)
        var buffer = [UInt8](repeating: 0, count: 1024)
        _ = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
        stream.cancel()
        // The producer's next write throws, the encoder stops, and the stream ends as failed.
        let (count, failed) = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
        #expect(count == nil && failed)
        #expect(!finished.isSet)
    }

    /// A flag set from the producer's thread.
    final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    static func startsOfScan(in bytes: [UInt8]) -> Int {
        zip(bytes, bytes.dropFirst()).filter { $0 == 0xFF && $1 == 0xDA }.count
    }
}
