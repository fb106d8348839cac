/// A file read at any offset, for the readers that read and seek like a file (`ReadCursor`): a remote file
/// through its block cache (`RemoteFile`), a local one through a few cached blocks (`BlockCachedFile`).
protocol RandomAccessFile: AnyObject {
    /// The file's size in bytes.
    var byteCount: Int { get }
    /// The bytes the file is read in at a time; a sequential reader's read-ahead starts at one.
    var blockSize: Int { get }
    /// The last failure of a read: what a codec that saw only "no more data" reports instead.
    var failure: TesseraError? { get }
    /// Fills `buffer` from byte `offset`; returns how many bytes were read (fewer only at the end of the file).
    /// `readAhead` is how many bytes past the buffer a sequential reader will likely want next (a hint).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, readAhead: Int) throws -> Int
}

extension RemoteFile: RandomAccessFile {}
