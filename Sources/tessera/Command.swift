/// One `tessera` subcommand: its declared interface and what it does.
protocol Command {
    /// The word that selects the command (`tessera NAME`): known without building `spec`, so finding the command
    /// builds no other command's options.
    static var name: String { get }
    static var spec: CommandSpec { get }
    /// Runs the command; throws `UsageError` for command-line mistakes and `TesseraError` for failures.
    static func run(_ arguments: Arguments) throws
    /// Sets up the process for the command before anything starts a thread (the signal handlers' queue does):
    /// what must be settled before a second thread allocates.
    static func prepareProcess()
}

extension Command {
    static func prepareProcess() {}
}

/// Exit statuses: what a script calling `tessera` can rely on.
enum ExitCode: Int32 {
    case success = 0
    /// Bad input, a failed read or write, or a processing error.
    case failure = 1
    /// A mistake on the command line.
    case usage = 2
}
