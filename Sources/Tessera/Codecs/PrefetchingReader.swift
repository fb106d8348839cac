import Foundation
import Synchronization

/// Reads another reader's strips ahead on a thread of its own, so decoding overlaps the stages that consume it
/// (a resampler's passes). The queue holds two strips: the producer waits when both are full, so memory stays
/// bounded by two strips, never the image.
///
///     producer thread: source.read -> slot 0 | slot 1  <- consumer: read(into:maxRows:) copies out rows
public final class PrefetchingReader: ImageReader {
    public let size: Size
    public let format: PixelFormat
    public private(set) var nextRow = 0
    public let decodesAhead = true
    private let queue: Queue
    /// The slot being consumed and how many of its rows were handed out.
    private var current: Int?
    private var consumed = 0
    private var slotIndex = 0

    /// Starts reading `source` ahead in strips of `stripRows` rows; `source` must not be used by anyone else.
    public init(source: any ImageReader, stripRows: Int = 32) {
        size = source.size
        format = source.format
        nextRow = source.nextRow
        queue = Queue(source: source, stripRows: max(1, stripRows))
        let queue = self.queue
        Thread.detachNewThread { queue.produce() }
    }

    deinit { queue.stop() }

    public func read(into strip: inout Strip, maxRows: Int) throws -> Bool {
        guard maxRows > 0 else { throw TesseraError.invalidArgument("maxRows must be positive") }
        if current == nil {
            queue.filled.wait()
            current = slotIndex
        }
        let slot = queue.slots[slotIndex]
        if let error = slot.error { throw error }
        let available = slot.strip.height - consumed
        guard available > 0 else {
            strip.prepare(y: nextRow, rows: 0, width: size.width, format: format)
            return false
        }
        let rows = min(maxRows, available)
        strip.prepare(y: nextRow, rows: rows, width: size.width, format: format)
        let rowBytes = strip.pixels.bytesPerRow, start = consumed * rowBytes
        strip.pixels.bytes.withUnsafeMutableBytes { target in
            slot.strip.pixels.bytes.withUnsafeBytes { source in
                target.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: rows * rowBytes)
            }
        }
        consumed += rows
        nextRow += rows
        if consumed == slot.strip.height {
            current = nil
            consumed = 0
            slotIndex = 1 - slotIndex
            queue.free.signal()
        }
        return true
    }

    /// One prefetched strip: its rows (none at the end) or the error reading it.
    private final class Slot: @unchecked Sendable {
        var strip: Strip
        var error: Error?
        init(strip: Strip) { self.strip = strip }
    }

    /// The two slots and their semaphores. Unchecked Sendable: the producer writes a slot only between `free.wait`
    /// and `filled.signal`, the consumer reads it only between `filled.wait` and `free.signal`, and the source is
    /// touched by the producer thread alone.
    private final class Queue: @unchecked Sendable {
        let source: any ImageReader
        let stripRows: Int
        let slots: [Slot]
        let filled = DispatchSemaphore(value: 0)
        /// Starts at zero and is signalled twice: libdispatch traps if a semaphore dies below its initial value.
        let free = DispatchSemaphore(value: 0)
        private let finished = DispatchSemaphore(value: 0)
        private let stopping = Mutex(false)

        init(source: any ImageReader, stripRows: Int) {
            self.source = source
            self.stripRows = stripRows
            slots = [Slot(strip: source.makeStrip()), Slot(strip: source.makeStrip())]
            free.signal()
            free.signal()
        }

        /// Fills the slots in turn until the source ends, fails, or the reader goes away.
        func produce() {
            defer { finished.signal() }
            var index = 0
            while true {
                free.wait()
                if stopping.withLock({ $0 }) { return }
                let slot = slots[index]
                do {
                    if try !source.read(into: &slot.strip, maxRows: stripRows) { slot.strip.pixels.setHeight(0) }
                } catch {
                    slot.error = error
                }
                let ended = slot.strip.height == 0 || slot.error != nil
                filled.signal()
                if ended { return }
                index = 1 - index
            }
        }

        /// Makes the producer return and waits for it, so the source is not read after its reader is gone.
        func stop() {
            stopping.withLock { $0 = true }
            free.signal()
            finished.wait()
        }
    }
}
