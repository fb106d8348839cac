import Foundation
import Tessera

/// The commands, in the order `tessera --help` lists them.
let commands: [any Command.Type] = [InfoCommand.self, ConvertCommand.self, RegionCommand.self, ResizeCommand.self,
                                   ThumbnailCommand.self, TileCommand.self, IndexCommand.self, ServeCommand.self,
                                   ViewCommand.self]
let version = "0.1.0"

func printError(_ message: String) {
    FileHandle.standardError.write(Data("tessera: \(message)\n".utf8))
}

var toolHelp: String {
    let width = (commands.map { $0.name.count }.max() ?? 0) + 2
    return (["usage: tessera COMMAND [OPTIONS] ...", "",
             "Tessera reads, converts, thumbnails, tiles and serves images far larger than memory.", "",
             "commands:"]
        + commands.map { "  " + $0.name.padding(toLength: width) + $0.spec.summary }
        + ["", "Run 'tessera COMMAND --help' for a command's options. Exit status: 0 ok, 1 failed, 2 usage error."])
        .joined(separator: "\n")
}

/// Routes SIGINT, SIGTERM and SIGHUP to `Interruption.shared`.
func handleSignals() -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM, SIGHUP].map { signalNumber in
        signal(signalNumber, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
        source.setEventHandler { Interruption.shared.interrupt(signalNumber) }
        source.resume()
        return source
    }
}

@MainActor func main() -> ExitCode {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let name = arguments.first, !["-h", "--help", "help"].contains(name) else {
        print(toolHelp)
        return arguments.isEmpty ? .usage : .success
    }
    if name == "--version" || name == "version" {
        print("tessera \(version)")
        return .success
    }
    guard let command = commands.first(where: { $0.name == name }) else {
        printError("unknown command '\(name)'; run 'tessera --help' for the list")
        return .usage
    }
    command.prepareProcess()
    let stats = RunStats()
    let signalSources = handleSignals()
    defer { signalSources.forEach { $0.cancel() } }
    do {
        let parsed = try Arguments(Array(arguments.dropFirst()), spec: command.spec)
        if parsed[CommonOptions.help] {
            print(command.spec.help)
            return .success
        }
        defer { if parsed[CommonOptions.stats] { stats.report() } }
        try RemoteOptions.install(parsed)
        try command.run(parsed)
        return .success
    } catch let error as UsageError {
        printError("\(name): \(error)\nusage: tessera \(command.spec.usage)  (see 'tessera \(name) --help')")
        return .usage
    } catch let error as CommandFailure {
        return error.status
    } catch let error as TesseraError {
        printError("\(error)")
        if case .invalidArgument = error { return .usage }
        return .failure
    } catch {
        printError("\(error)")
        return .failure
    }
}

/// Thrown by a command that has already reported its own errors (one per failed input) and only sets the status.
struct CommandFailure: Error {
    let status: ExitCode
}

exit(main().rawValue)
