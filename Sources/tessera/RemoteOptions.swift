import Tessera

/// The options of the block cache under remote inputs (`http(s)://` and `s3://`), declared once; every command
/// takes them, as every command reads inputs, and `main` sets the cache up from them before the command runs.
enum RemoteOptions {
    static let memory = Option("block-cache", .byteSize, default: BlockCache.defaultBudget,
                               "most memory blocks of remote inputs (http, https, s3) are kept in")
    static let folder = Option("block-cache-folder", ValueKind.text("DIR").optional,
                               "also keep blocks of remote inputs in this folder, for later runs and other processes on this machine (only of files with an ETag or Last-Modified)")
    static let folderSize = Option("block-cache-folder-size", .byteSize, default: BlockFolder.defaultLimit,
                                   "most space the --block-cache-folder takes on disk")

    static let all: [any OptionDeclaration] = [memory, folder, folderSize]

    /// Makes the cache the options ask for the one every remote file of this run uses.
    static func install(_ arguments: Arguments) throws {
        let blockFolder = try arguments[folder].map { try BlockFolder(path: $0, limit: arguments[folderSize]) }
        BlockCache.share(BlockCache(budget: arguments[memory], folder: blockFolder))
    }
}
