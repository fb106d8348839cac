import Testing
@testable import TesseraServer

@Suite struct FileDescriptorLimitTests {
    /// Connections take what the descriptors leave after those kept for files, up to libmicrohttpd's 4,096, and
    /// never fewer than 16.
    @Test func connectionsFitInTheDescriptors() {
        #expect(FileDescriptorLimit.connectionLimit(descriptors: 1_048_576) == 4096)
        #expect(FileDescriptorLimit.connectionLimit(descriptors: 1024) == 1024 - 256)
        #expect(FileDescriptorLimit.connectionLimit(descriptors: 300) == 44)
        #expect(FileDescriptorLimit.connectionLimit(descriptors: 100) == 16)
        #expect(FileDescriptorLimit.connectionLimit(descriptors: nil) == 4096)
    }
}
