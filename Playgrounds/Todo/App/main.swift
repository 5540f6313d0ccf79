// `todo`: a terminal todo list built on Stillwater. Run it with `swift run todo`; `todo --help` explains
// both modes. Everything but the terminal lives in TodoCore, where the tests reach it.

import Foundation
import TodoCore

/// Writes `text` and a newline to standard error, after whatever standard output still holds.
func printError(_ text: String) {
    fflush(nil)
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let options: TodoOptions
do {
    options = try TodoOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    printError("todo: \(error)")
    exit(2)
}
if options.showsHelp {
    print(TodoOptions.usage)
    exit(0)
}

let file = TodoFile(path: options.file ?? TodoFile.defaultPath)
let loaded: TodoFile.LoadResult
do {
    loaded = try file.load()
} catch {
    printError("todo: \(error)")
    exit(1)
}
var notice: String?
if case .setAside(let reason, let movedTo) = loaded {
    notice = "\(file.path) was a damaged todo list (\(reason)); it was renamed to \(movedTo), and the list starts empty"
    printError("todo: warning: \(notice!)")
}

if isTerminal(STDIN_FILENO) && isTerminal(STDOUT_FILENO) {
    // Saves wait 0.4 s after the last change, on a scheduler the key loop runs (the session is not
    // thread-safe); every way out saves first.
    // TODO_SAVE_DELAY_MS (milliseconds) replaces the 0.4 s: the end-to-end tests set it far beyond
    // their run, so only a save on the way out can put their change in the file.
    let delay = ProcessInfo.processInfo.environment["TODO_SAVE_DELAY_MS"].flatMap(Int.init).map { max($0, 0) }
    let scheduler = PollingScheduler()
    let session = TodoSession(
        loaded.list, file: file, showsCursor: true, saveDelay: .milliseconds(delay ?? 400), scheduler: scheduler)
    let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
    let shownPath = !home.isEmpty && file.path.hasPrefix(home + "/") ? "~" + file.path.dropFirst(home.count) : file.path
    exit(runInteractive(
        session: session, scheduler: scheduler, title: "Stillwater todo (\(shownPath))", notice: notice))
} else {
    let session = TodoSession(loaded.list, file: file)
    let runner = PipedRunner(session: session, quiet: options.isQuiet, output: { print($0) }, errors: printError)
    // No save delay: each change is saved before its line's output is printed.
    while let line = readLine(), runner.run(line) {}
    session.saveNow()
    exit(runner.failures == 0 ? 0 : 1)
}
