import Foundation
import Testing
import TodoCore

/// Runs the `todo` executable that `swift build` put beside the test bundle.
///
/// The test target depends on the `Todo` executable target, so building the tests builds `todo` into the
/// same folder (`.build/debug`, or the folder under `--scratch-path`). Set `TODO_BINARY` to test another
/// build.
enum TodoBinary {
    static let path: String? = {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["TODO_BINARY"] { candidates.append(explicit) }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append((bundle.bundlePath as NSString).deletingLastPathComponent)
        }
        candidates.append((CommandLine.arguments[0] as NSString).deletingLastPathComponent)
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append((executable as NSString).deletingLastPathComponent)
        }
        return candidates
            .map { $0.hasSuffix("/todo") ? $0 : ($0 as NSString).appendingPathComponent("todo") }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    struct Run {
        var output: String
        var errors: String
        var status: Int32
        var lines: [String] { output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Runs `todo` with `arguments`, `input` as its standard input (a pipe, so it runs in piped mode).
    static func run(_ arguments: [String], input: String = "", home: String) throws -> Run {
        let path = try #require(path, "the todo executable was not found beside the tests; build with `swift build`")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ["HOME": home, "PATH": "/usr/bin:/bin"]
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Read both outputs while writing, so that neither pipe fills up and blocks the child.
        let collected = Collected()
        let group = DispatchGroup()
        for (pipe, isOutput) in [(stdout, true), (stderr, false)] {
            DispatchQueue.global().async(group: group) {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.store(data, isOutput: isOutput)
            }
        }
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        group.wait()
        process.waitUntilExit()
        return Run(output: collected.output, errors: collected.errors, status: process.terminationStatus)
    }

    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var outputData = Data()
        private var errorData = Data()

        func store(_ data: Data, isOutput: Bool) {
            lock.withLock { if isOutput { outputData = data } else { errorData = data } }
        }

        var output: String { lock.withLock { String(decoding: outputData, as: UTF8.self) } }
        var errors: String { lock.withLock { String(decoding: errorData, as: UTF8.self) } }
    }
}

@Suite("todo, run as a program")
struct EndToEndTests {
    let folder = TemporaryFolder()

    @Test("two todo processes on one file: the second's save does not drop the first's change")
    func twoProcesses() throws {
        let path = try #require(TodoBinary.path, "the todo executable was not found beside the tests")
        let file = folder.file("list.json")
        let first = Process()
        first.executableURL = URL(fileURLWithPath: path)
        first.arguments = ["--quiet", "--file", file]
        first.environment = ["HOME": folder.path, "PATH": "/usr/bin:/bin"]
        let (input, output) = (Pipe(), Pipe())
        first.standardInput = input
        first.standardOutput = output
        first.standardError = FileHandle.nullDevice
        try first.run()

        // The first program adds an item and keeps running...
        input.fileHandleForWriting.write(Data("add milk\n".utf8))
        let deadline = Date().addingTimeInterval(20)
        while folder.read("list.json")?.contains("milk") != true, Date() < deadline { usleep(10_000) }
        #expect(folder.read("list.json")?.contains("milk") == true)

        // ...while a second one, started after it, adds another and exits...
        let second = try TodoBinary.run(["--file", file], input: "add eggs\n", home: folder.path)
        #expect(second.status == 0)

        // ...and the first one's next change keeps the second's item.
        input.fileHandleForWriting.write(Data("add tea\ntoggle 1\n".utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        #expect(printed.contains("Merged: another window's changes to list.json"))
        let list = try TodoFile(path: file).load().list
        #expect(list.items.map(\.title) == ["milk", "eggs", "tea"])
        #expect(list.items.map(\.isDone) == [true, false, false])
    }

    @Test("a file that is not a todo list stops the program with a clear message, untouched")
    func notATodoList() throws {
        let contents = #"{"version":1,"items":[]}"#
        folder.write(contents, to: "list.json")
        let run = try TodoBinary.run(["--file", folder.file("list.json")], input: "add milk\n", home: folder.path)
        #expect(run.status == 1)
        #expect(run.errors.contains("is not a todo list: expected a JSON object with \"format\": \"stillwater-todo\", found a JSON object without"))
        #expect(folder.read("list.json") == contents)
        #expect(folder.names == ["list.json"])
    }

    @Test("a read-only list: piped changes are reported as not saved, and the run fails")
    func readOnlyPiped() throws {
        let file = folder.file("list.json")
        _ = try TodoBinary.run(["--file", file], input: "add milk\n", home: folder.path)
        let before = folder.read("list.json")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file)
        let run = try TodoBinary.run(["--file", file], input: "add eggs\n", home: folder.path)
        #expect(run.status == 1)
        #expect(run.lines.first == "added \"eggs\" as item 2, in memory only")
        #expect(run.errors.hasPrefix("line 1: not saved: \(file) is read-only"))
        #expect(folder.read("list.json") == before)
    }

    @Test("piped commands print the list and the redraw counts, and the list is saved")
    func pipedSession() throws {
        let file = folder.file("list.json")
        let run = try TodoBinary.run(["--file", file], input: "add milk\nadd eggs\nadd bread\ntoggle 2\nmove 3 up\n", home: folder.path)
        #expect(run.status == 0)
        #expect(run.errors == "")
        #expect(run.lines.suffix(11) == [
            "item 2 \"eggs\" is done", "   1. [ ] milk", "   2. [x] eggs", "   3. [ ] bread", "redrew 1 of 3 rows · 2 of 3 left",
            "moved \"bread\" up to item 2", "   1. [ ] milk", "   2. [ ] bread", "   3. [x] eggs", "redrew 2 of 3 rows · 2 of 3 left",
        ] + [""])

        let again = try TodoBinary.run(["--file", file], input: "list\nundo\n", home: folder.path)
        #expect(again.lines == ["   1. [ ] milk", "   2. [ ] bread", "   3. [x] eggs", "2 of 3 left", "nothing to undo", ""])
    }

    @Test("bad lines print why on standard error, change nothing, and end with status 1")
    func badLines() throws {
        let file = folder.file("list.json")
        let run = try TodoBinary.run(["-f", file], input: "add milk\nfrob\ntoggle 5\nmove 1 sideways\nlist\n", home: folder.path)
        #expect(run.status == 1)
        #expect(run.errors.split(separator: "\n") == [
            "line 2: unknown command \"frob\"; type \"help\" for the list of commands",
            "line 3: there is no item 5: the list shows only item 1",
            "line 4: move needs up or down, like: move 1 up (not \"sideways\")",
        ])
        #expect(run.lines.suffix(3) == ["   1. [ ] milk", "1 of 1 left", ""])
    }

    @Test("without --file the list lives in the home folder")
    func defaultFile() throws {
        let run = try TodoBinary.run([], input: "add milk\n", home: folder.path)
        #expect(run.status == 0)
        #expect(folder.read(".stillwater-todo.json")?.contains("\"title\" : \"milk\"") == true)
    }

    @Test("a corrupt file is reported and set aside, and the new list is saved beside it")
    func corruptFile() throws {
        let damaged = #"{"format": "stillwater-todo", "version": 1, "items": [{"id": 1, "#
        folder.write(damaged, to: "list.json")
        let run = try TodoBinary.run(["--file", folder.file("list.json")], input: "add milk\n", home: folder.path)
        #expect(run.status == 0)
        #expect(run.errors.contains("was a damaged todo list (not valid JSON: Unexpected end of file during JSON parse.); it was renamed to \(folder.file("list.json")).corrupt-"))
        let asideName = try #require(folder.names.first { $0.hasPrefix("list.json.corrupt-") })
        #expect(folder.read(asideName) == damaged)
        #expect(folder.read("list.json")?.contains("milk") == true)
    }

    @Test("--help explains both modes; a bad option exits with status 2")
    func help() throws {
        let help = try TodoBinary.run(["--help"], home: folder.path)
        #expect(help.status == 0)
        #expect(help.output.contains("In a terminal, todo opens a full-screen list"))
        #expect(help.output.contains("When its input is not a terminal"))
        let bad = try TodoBinary.run(["--frob"], home: folder.path)
        #expect(bad.status == 2)
        #expect(bad.errors == "todo: unknown argument \"--frob\"; see todo --help\n")
    }

    @Test("a file from a newer todo stops the program and is left alone")
    func newerFile() throws {
        let contents = #"{"format": "stillwater-todo", "version": 9, "items": []}"#
        folder.write(contents, to: "list.json")
        let run = try TodoBinary.run(["--file", folder.file("list.json")], input: "add milk\n", home: folder.path)
        #expect(run.status == 1)
        #expect(run.errors.contains("was written by a newer todo (format version 9)"))
        #expect(folder.read("list.json") == contents)
    }
}
