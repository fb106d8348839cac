import Foundation

// tessera-fuzz: Tessera's parsers under libFuzzer (Makefile: `make fuzz`), and, in an ordinary build, the same
// targets replayed over saved inputs, which is how the regression inputs run in `make test`.
//
//   tessera-fuzz --list
//   tessera-fuzz TARGET [libFuzzer options] [CORPUS FOLDER ...]     a build with -DFUZZING (make fuzz)
//   tessera-fuzz TARGET FILE-OR-FOLDER ...                          any build: each input once; exit 0 if none traps

let arguments = CommandLine.arguments
guard arguments.count >= 2, arguments[1] != "--help", arguments[1] != "-h" else {
    print("usage: tessera-fuzz --list | TARGET [INPUTS...]\n(make fuzz runs every target under libFuzzer)")
    exit(arguments.count >= 2 ? 0 : 2)
}
if arguments[1] == "--list" {
    for target in FuzzTarget.all { print(target.name.padding(toLength: 15, withPad: " ", startingAt: 0) + target.summary) }
    exit(0)
}
guard let target = FuzzTarget.all.first(where: { $0.name == arguments[1] }) else {
    FileHandle.standardError.write(Data("tessera-fuzz: no target '\(arguments[1])' (see --list)\n".utf8))
    exit(2)
}
FuzzDriver.target = target
atexit { FuzzScratch.removeRoot() }
exit(FuzzDriver.run(arguments: [arguments[0]] + arguments.dropFirst(2)))
