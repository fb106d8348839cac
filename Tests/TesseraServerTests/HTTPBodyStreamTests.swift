import Foundation
import Synchronization
import Testing
import Tessera
@testable import TesseraServer

/// A progressive JPEG streamed through `HTTPBodyStream` as `ProgressiveStreamService` streams it, read the way
/// the server's content reader reads it (suspended while nothing is ready, resumed by the producer).
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
        while case let .bytes(count) = Self.read(stream, into: &buffer) {
            body += buffer[..<count]
            if finishedAtFirstScan == nil, Self.startsOfScan(in: body) >= 2 {
                // The first scan is complete here; the encoder, at most the stream's capacity and one libjpeg
                // buffer ahead of this reader, cannot have finished a file this much larger.
                finishedAtFirstScan = finished.isSet
            }
        }
        #expect(Self.read(stream, into: &buffer) == .end(failed: false))
        #expect(finishedAtFirstScan == false)
        #expect(body.count > 200_000)
        let decoded = try ImageSource(bytes: body).makeReader().readAll()
        #expect(decoded.size == Self.noise.size)
    }

    @Test func aReaderThatLeavesReleasesTheProducer() throws {
        let finished = Flag()
        let stream = Self.start(capacity: 16 * 1024, finished: finished)
        var buffer = [UInt8](repeating: 0, count: 1024)
        _ = Self.read(stream, into: &buffer)
        stream.cancel()
        // The producer's next write throws, the encoder stops, and the stream ends as failed.
        #expect(Self.read(stream, into: &buffer) == .end(failed: true))
        #expect(!finished.isSet)
    }

    @Test func aReadWithNothingReadySuspendsUntilTheProducerWrites() {
        let release = DispatchSemaphore(value: 0)
        let stream = HTTPBodyStream { stream in
            release.wait()
            try [UInt8](repeating: 7, count: 10).withUnsafeBytes { try stream.write($0) }
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        let woken = DispatchSemaphore(value: 0)
        let suspensions = Mutex(0)
        let first = buffer.withUnsafeMutableBytes { target in
            stream.read(into: target, suspend: {
                suspensions.withLock { $0 += 1 }
                return { woken.signal() }
            })
        }
        #expect(first == .waiting && suspensions.withLock { $0 } == 1)
        release.signal()
        #expect(woken.wait(timeout: .now() + 10) == .success)
        #expect(Self.read(stream, into: &buffer) == .bytes(10))
        #expect(Self.read(stream, into: &buffer) == .end(failed: false))
        // A connection that cannot be suspended (the server is stopping) ends the body as failed.
        let stuck = HTTPBodyStream { _ in release.wait() }
        #expect(buffer.withUnsafeMutableBytes { stuck.read(into: $0, suspend: { nil }) } == .end(failed: true))
        release.signal()
    }

    /// One read as the server's content reader makes it, waiting (as a suspended connection does) for the
    /// producer's wake whenever nothing is ready.
    static func read(_ stream: HTTPBodyStream, into buffer: inout [UInt8]) -> HTTPBodyStream.Read {
        while true {
            let woken = DispatchSemaphore(value: 0)
            let result = buffer.withUnsafeMutableBytes { stream.read(into: $0, suspend: { { woken.signal() } }) }
            guard result == .waiting else { return result }
            woken.wait()
        }
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
