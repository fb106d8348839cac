/// GIF's variable-width LZW, decoded as a stream: indices come out as the codes are read from the image's
/// data sub-blocks, in whatever amounts the caller asks for, with a fixed 4,096-entry table and one pending
/// string, so memory does not depend on the image. Hostile data cannot make it trap: every code is checked
/// against the table, and the end of the data (end code, block terminator or end of file) just stops output.
final class LZWDecoder {
    /// Why the decoder stopped producing indices.
    enum End: Equatable {
        /// Still decoding.
        case none
        /// The end-of-information code.
        case endCode
        /// The block terminator came without an end code.
        case blockTerminator
        /// The file ended inside the data.
        case endOfFile
    }

    private let input: BufferedInput
    private let minimumCodeSize: Int
    private let clearCode: Int
    // The table and buffers live in fixed unsafe buffers: this is the hot loop of GIF decoding, and array
    // accesses through a class cost uniqueness and exclusivity checks on every index.
    /// For each code, the code of its string without the last index, that last index, and the string's length.
    private let prefix = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: 4096)
    private let suffix = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 4096)
    private let length = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: 4096)
    private var nextCode = 0
    private var codeSize = 0
    private var previous: Int?
    /// The string of the last code, `pendingStart..<pendingEnd` of it not yet handed out.
    private let pending = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 4096)
    private var pendingStart = 0
    private var pendingEnd = 0
    private var bits = 0
    private var bitCount = 0
    /// The current data sub-block, read whole, and the next byte's position in it.
    private let block = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 255)
    private var blockCount = 0
    private var blockPosition = 0
    /// Whether the file ended inside the last sub-block read.
    private var blockCut = false
    /// Why decoding has stopped, once it has.
    private(set) var end = End.none

    /// Reads from `input` at the first data sub-block; `minimumCodeSize` is the byte before it, 1-8
    /// (checked by the caller: larger sizes would make indices that do not fit a palette).
    init(input: BufferedInput, minimumCodeSize: Int) {
        precondition((1...8).contains(minimumCodeSize), "LZW minimum code size out of range")
        self.input = input
        self.minimumCodeSize = minimumCodeSize
        clearCode = 1 << minimumCodeSize
        prefix.initialize(repeating: 0)
        suffix.initialize(repeating: 0)
        length.initialize(repeating: 0)
        pending.initialize(repeating: 0)
        block.initialize(repeating: 0)
        for code in 0..<clearCode {
            suffix[code] = UInt8(code)
            length[code] = 1
        }
        resetTable()
    }

    deinit {
        prefix.deallocate()
        suffix.deallocate()
        length.deallocate()
        pending.deallocate()
        block.deallocate()
    }

    /// Fills `indices` from the start; returns how many were produced, fewer only when `end` says why.
    /// Throws `.corrupt` for a code beyond the table.
    func decode(into indices: UnsafeMutableBufferPointer<UInt8>) throws -> Int {
        var filled = 0
        while true {
            let chunk = min(pendingEnd - pendingStart, indices.count - filled)
            if chunk > 0 {
                // chunk > 0, so neither buffer is empty and both have a base address.
                (indices.baseAddress! + filled).update(from: pending.baseAddress! + pendingStart, count: chunk)
                filled += chunk
                pendingStart += chunk
            }
            if filled == indices.count || end != .none { return filled }
            try decodeNextString()
        }
    }

    /// Reads codes until one yields a string (left in `pending`) or the data ends.
    private func decodeNextString() throws {
        while let code = try readCode() {
            if code == clearCode {
                resetTable()
                continue
            }
            if code == clearCode + 1 {
                end = .endCode
                return
            }
            guard let previous else {
                // The first code after a clear must be a single index.
                guard code < clearCode else { throw LZWError.codeBeyondTable(code) }
                pending[0] = UInt8(code)
                pendingStart = 0
                pendingEnd = 1
                self.previous = code
                return
            }
            let count: Int
            if code < nextCode {
                count = expand(code)
            } else if code == nextCode {
                // The code being defined (KwKwK): the previous string plus its own first index.
                let previousCount = expand(previous)
                pending[previousCount] = pending[0]
                count = previousCount + 1
            } else {
                throw LZWError.codeBeyondTable(code)
            }
            if nextCode < 4096 {
                prefix[nextCode] = UInt16(previous)
                suffix[nextCode] = pending[0]
                length[nextCode] = length[previous] + 1
                nextCode += 1
                // Full tables keep 12-bit codes until the encoder sends a clear (a "deferred clear").
                if nextCode == 1 << codeSize && codeSize < 12 { codeSize += 1 }
            }
            self.previous = code
            pendingStart = 0
            pendingEnd = count
            return
        }
    }

    /// Writes the string of `code` (below `nextCode`) to the start of `pending`; returns its length.
    private func expand(_ code: Int) -> Int {
        let count = Int(length[code])
        var current = code, index = count
        while index > 0 {
            index -= 1
            pending[index] = suffix[current]
            current = Int(prefix[current])
        }
        return count
    }

    private func resetTable() {
        nextCode = clearCode + 2
        codeSize = minimumCodeSize + 1
        previous = nil
    }

    /// The next code, least significant bits first across sub-blocks; nil (with `end` set) when the data ends.
    private func readCode() throws -> Int? {
        while bitCount < codeSize {
            if blockPosition == blockCount {
                guard !blockCut, let size = try input.readByte() else {
                    end = .endOfFile
                    return nil
                }
                guard size > 0 else {
                    end = .blockTerminator
                    return nil
                }
                blockCount = try input.read(into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: block[..<Int(size)])))
                blockPosition = 0
                blockCut = blockCount < Int(size)
                continue
            }
            bits |= Int(block[blockPosition]) << bitCount
            blockPosition += 1
            bitCount += 8
        }
        let code = bits & (1 << codeSize - 1)
        bits >>= codeSize
        bitCount -= codeSize
        return code
    }
}

/// What is wrong with LZW data; the GIF decoder adds the file and row.
enum LZWError: Error, Equatable {
    case codeBeyondTable(Int)
}
