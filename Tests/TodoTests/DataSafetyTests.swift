import Foundation
import Testing
@testable import TodoCore

/// Each way the todo program used to lose or damage a user's data, reproduced.
@Suite("todo never loses a user's data")
struct DataSafetyTests {
    let folder = TemporaryFolder()
    var path: String { folder.file("todo.json") }

    func bytes(_ path: String) -> Data? {
        FileManager.default.contents(atPath: path)
    }

    func setMode(_ mode: Int, _ path: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    // MARK: Two programs on one file

    @Test("two sessions on one file: the second save merges the first's change instead of dropping it")
    func twoSessions() throws {
        let file = TodoFile(path: path)
        try file.save(TodoList(titles: ["milk", "eggs"]))
        let first = TodoSession(try file.load().list, file: file)
        let second = TodoSession(try file.load().list, file: file)

        _ = try first.perform(.add("bread"))
        _ = try second.perform(.toggle(1))
        #expect(second.mergeNotice.value == "Merged: another window's changes to todo.json")
        #expect(!second.history.canUndo, "undo cannot step back over the merged-in change")
        _ = try second.perform(.add("tea"))

        let saved = try file.load().list
        #expect(saved.items.map(\.title) == ["milk", "eggs", "bread", "tea"])
        #expect(saved.items.map(\.isDone) == [true, false, false, false])
        #expect(Set(saved.items.map(\.id)).count == 4, "the two adds got different identities")
        #expect(second.list == saved, "the session continues from the merged list")
        #expect(!second.hasUnsavedChanges)

        // The first session, in turn, takes in the second's changes at its next save.
        _ = try first.perform(.delete(2))
        #expect(try file.load().list.items.map(\.title) == ["milk", "bread", "tea"])
        #expect(first.list == (try file.load().list))
    }

    @Test("a save that merges, then plain saves: the notice stays until the next own change is saved")
    func mergeNoticeLifetime() throws {
        let file = TodoFile(path: path)
        try file.save(TodoList(titles: ["milk"]))
        let session = TodoSession(try file.load().list, file: file)
        var other = try file.load().list
        TodoAction.add("eggs").reduce(&other)
        _ = try file.update(to: other, from: try file.load().list)

        _ = try session.perform(.toggle(1))
        #expect(session.mergeNotice.value != nil)
        _ = try session.perform(.toggle(1))
        #expect(session.mergeNotice.value == nil)
        #expect(try file.load().list.items.map(\.title) == ["milk", "eggs"])
    }

    // MARK: Files that are not this program's list

    @Test("a file that is not a todo list is refused, left byte for byte as it was, and nothing is written",
          arguments: [
            ("just some notes\nmilk\n", "text that is not JSON"),
            (#"{"foo":1}"#, #"a JSON object without "format": "stillwater-todo""#),
            ("[]", "a JSON array"),
            (#"{"version":1,"items":[]}"#, #"a JSON object without "format": "stillwater-todo""#),
            (#"{"format":"other-app","version":1,"items":[]}"#, #"a JSON object of the format "other-app""#),
            ("42", "a number"),
            ("// \"format\": \"stillwater-todo\" is written by TodoFormat\nlet x = [1,\n", "text that is not JSON"),
          ])
    func notATodoList(contents: String, found: String) throws {
        folder.write(contents, to: "todo.json")
        let file = TodoFile(path: path)
        #expect(throws: TodoFileError.notATodoList(path: file.path, found: found)) { try file.load() }
        #expect(throws: TodoFileError.notATodoList(path: file.path, found: found)) { try file.save(TodoList(titles: ["x"])) }
        #expect(bytes(path) == Data(contents.utf8))
        #expect(folder.names == ["todo.json"])
        let message = "\(TodoFileError.notATodoList(path: file.path, found: found))"
        #expect(message.contains("expected a JSON object with \"format\": \"stillwater-todo\", found \(found)"))
    }

    @Test("a file replaced by something else while the program runs is not overwritten")
    func replacedWhileRunning() throws {
        let file = TodoFile(path: path)
        let session = TodoSession(TodoList(), file: file)
        _ = try session.perform(.add("milk"))
        folder.write("my notes", to: "todo.json")
        _ = try session.perform(.add("eggs"))
        #expect(folder.read("todo.json") == "my notes")
        #expect(session.saveProblem.value?.contains("was replaced by another program with text that is not JSON") == true)
        #expect(session.hasUnsavedChanges)
    }

    @Test("a device or a pipe given as the file is refused without reading or writing it")
    func notARegularFile() throws {
        #expect(throws: TodoFileError.notAFile(path: "/dev/null")) { try TodoFile(path: "/dev/null").load() }
        #expect(throws: TodoFileError.notAFile(path: "/dev/null")) { try TodoFile(path: "/dev/null").save(TodoList()) }
        let fifo = folder.file("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: TodoFileError.notAFile(path: fifo)) { try TodoFile(path: fifo).load() }
    }

    @Test("a damaged list met when saving is reported as damaged, and not overwritten")
    func damagedOnSave() throws {
        let damaged = #"{"format": "stillwater-todo", "version": 1, "items": [{"id": 1}]}"#
        folder.write(damaged, to: "todo.json")
        let file = TodoFile(path: path)
        #expect(throws: TodoFileError.damaged(path: file.path, reason: "item 1 of 1 has no \"title\" string")) {
            try file.save(TodoList(titles: ["x"]))
        }
        #expect(folder.read("todo.json") == damaged)
    }

    // MARK: Read-only file, unwritable folder

    @Test("a read-only list file is not replaced; the change stays in memory and can be saved elsewhere")
    func readOnlyFile() throws {
        let file = TodoFile(path: path)
        try file.save(TodoList(titles: ["milk"]))
        let original = bytes(path)
        try setMode(0o444, path)
        let session = TodoSession(try file.load().list, file: file)

        _ = try session.perform(.add("eggs"))
        #expect(bytes(path) == original)
        #expect(session.saveProblem.value == "not saved: \(file.path) is read-only, so nothing was written; the changes are only in memory")
        #expect(session.hasUnsavedChanges)
        #expect(session.list.items.map(\.title) == ["milk", "eggs"])

        let elsewhere = folder.file("copy.json")
        #expect(throws: TodoFileError.alreadyExists(path: file.path)) { try session.save(to: path) }
        try session.save(to: elsewhere)
        #expect(!session.hasUnsavedChanges)
        #expect(session.saveProblem.value == nil)
        #expect(try TodoFile(path: elsewhere).load().list.items.map(\.title) == ["milk", "eggs"])
        _ = try session.perform(.add("tea"))
        #expect(try TodoFile(path: elsewhere).load().list.items.count == 3, "later changes go to the new file")
        #expect(bytes(path) == original)
    }

    @Test("an unwritable folder: the error names the folder, nothing is written, the change is kept")
    func unwritableFolder() throws {
        let file = TodoFile(path: path)
        try setMode(0o555, folder.path)
        defer { try? setMode(0o755, folder.path) }
        let session = TodoSession(TodoList(), file: file)
        _ = try session.perform(.add("milk"))
        let problem = try #require(session.saveProblem.value)
        #expect(problem.contains("cannot save in the folder \(folder.path) ("))
        #expect(!problem.contains("todo.json"))
        #expect(folder.names.isEmpty)
        #expect(session.hasUnsavedChanges)
    }

    @Test("piped mode: a failed save is reported on the line of its command, and the run fails")
    func pipedFailedSave() throws {
        let file = TodoFile(path: path)
        try setMode(0o555, folder.path)
        defer { try? setMode(0o755, folder.path) }
        var output: [String] = [], errors: [String] = []
        let runner = PipedRunner(session: TodoSession(TodoList(), file: file), output: { output.append($0) },
                                 errors: { errors.append($0) })
        let status = runner.run(lines: ["list", "add milk", "filter done", "list"])
        #expect(status == 1)
        #expect(output.contains("added \"milk\" as item 1, in memory only"))
        #expect(!output.contains("added \"milk\" as item 1"))
        #expect(output.contains("showing done items"), "a line that saved nothing is not blamed")
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("line 2: not saved: cannot save in the folder \(folder.path)") == true)
    }

    @Test("interactive: q with unsaved changes asks first; a second q quits, another key stays")
    func quitAsks() throws {
        let file = TodoFile(path: path)
        try setMode(0o555, folder.path)
        defer { try? setMode(0o755, folder.path) }
        let session = TodoSession(TodoList(), file: file, showsCursor: true)
        let terminal = VirtualTerminal(height: 12)
        let screen = TodoScreen(session: session, width: 200, height: 12, output: terminal.receive)
        _ = try session.perform(.add("milk"))

        #expect(screen.handle(.character("q")), "the first q does not quit")
        #expect(screen.mode == .confirmingQuit)
        #expect(terminal.rows[10] == "not saved: q quits and loses the changes · w saves elsewhere · other keys stay")
        #expect(terminal.styles[10] == .warning)
        #expect(screen.handle(.character("j")))
        #expect(screen.mode == .browsing)
        #expect(screen.handle(.character("q")))
        #expect(!screen.handle(.character("q")), "q again quits knowingly")

        let saved = TodoSession(TodoList(titles: ["milk"]), file: TodoFile(path: folder.file("never-written.json")), showsCursor: true)
        let quiet = TodoScreen(session: saved, width: 80, height: 12, output: { _ in })
        #expect(!quiet.handle(.character("q")), "with nothing unsaved, q quits at once")
    }

    /// A screen over a read-only list file holding "milk", after "eggs" was added (and not saved).
    func readOnlyScreen() throws -> (TodoFile, TodoSession, TodoScreen, VirtualTerminal) {
        let file = TodoFile(path: path)
        try file.save(TodoList(titles: ["milk"]))
        try setMode(0o444, path)
        let session = TodoSession(try file.load().list, file: file, showsCursor: true)
        let terminal = VirtualTerminal(height: 12)
        let screen = TodoScreen(session: session, width: 200, height: 12, output: terminal.receive)
        _ = try session.perform(.add("eggs"))
        return (file, session, screen, terminal)
    }

    @Test("interactive: w saves to another file typed in the line editor")
    func saveAsKey() throws {
        let (file, session, screen, terminal) = try readOnlyScreen()
        screen.handle(.down)
        #expect(terminal.rows[10].hasPrefix("w saves elsewhere · not saved: \(file.path) is read-only"))
        #expect(terminal.styles[10] == .warning)
        #expect(screen.handle(.character("q")))
        #expect(screen.handle(.character("w")))
        let target = folder.file("saved.json")
        screen.type(target)
        screen.handle(.enter)
        #expect(terminal.rows[10].contains("now saving to \(folder.path)"))
        #expect(session.file == TodoFile(path: target))
        #expect(try TodoFile(path: target).load().list.items.map(\.title) == ["milk", "eggs"])
        #expect(!screen.handle(.character("q")), "saved now, so q quits at once")
    }

    @Test("interactive: saving elsewhere to a path that exists says why on the status line, over the standing warning")
    func saveAsRefused() throws {
        let (file, session, screen, terminal) = try readOnlyScreen()
        folder.write("mine", to: "taken.txt")
        screen.handle(.character("w"))
        screen.type(folder.file("taken.txt"))
        screen.handle(.enter)
        #expect(terminal.status.hasPrefix("not saved to \(folder.file("taken.txt")): \(folder.file("taken.txt")) exists already"))
        #expect(folder.read("taken.txt") == "mine")
        #expect(session.file == file)
        screen.handle(.down)
        #expect(terminal.rows[10].hasPrefix("w saves elsewhere · not saved:"), "the next key shows the standing warning again")
    }

    @Test("interactive: an item added while another todo saved the same file is found under its new identity")
    func addAfterMerge() throws {
        let file = TodoFile(path: path)
        try file.save(TodoList(titles: ["milk"]))
        let other = TodoSession(try file.load().list, file: file)
        let session = TodoSession(try file.load().list, file: file, showsCursor: true)
        let terminal = VirtualTerminal(height: 12)
        let screen = TodoScreen(session: session, width: 200, height: 12, output: terminal.receive)
        _ = try other.perform(.add("bread"))
        screen.handle(.character("a"))
        screen.type("tea")
        screen.handle(.enter)
        #expect(terminal.rows[10].contains("added \"tea\""))
        #expect(session.list.items.map(\.title) == ["milk", "bread", "tea"])
        #expect(session.rows.value.first { $0.isSelected }?.item.title == "tea", "the cursor is on the new item")
    }

    // MARK: Fields the program does not know

    @Test("fields the program does not know survive a load, a change and a save")
    func unknownFields() throws {
        folder.write(#"""
            {"format": "stillwater-todo", "version": 1, "owner": {"name": "ada", "since": 2024}, "nextID": 3,
             "items": [{"id": 1, "title": "milk", "done": false, "priority": "high", "tags": ["shop", 2, null, 1.5]},
                       {"id": 2, "title": "eggs", "done": true}]}
            """#, to: "todo.json")
        let file = TodoFile(path: path)
        let session = TodoSession(try file.load().list, file: file)
        _ = try session.perform(.toggle(1))
        _ = try session.perform(.edit(1, "oat milk"))
        _ = try session.perform(.move(2, .up))

        let list = try file.load().list
        #expect(list.otherFields == ["owner": .object(["name": .string("ada"), "since": .integer(2024)])])
        let milk = try #require(list.items.first { $0.id == 1 })
        #expect(milk.title == "oat milk" && milk.isDone)
        #expect(milk.otherFields == ["priority": .string("high"), "tags": .array([.string("shop"), .integer(2), .null, .number(1.5)])])
        #expect(folder.read("todo.json")?.contains("\"priority\" : \"high\"") == true)
    }

    // MARK: Identities

    @Test("an identity outside 1...2^53-1 is a clear error on load, and the file is untouched", arguments: [
        ("9223372036854775807", "item 1 of 1 has the identity 9223372036854775807"),
        ("0", "item 1 of 1 has the identity 0"),
        ("-5", "item 1 of 1 has the identity -5"),
        ("1e30", "item 1 of 1 has the identity 1e+30"),
        ("9007199254740992", "item 1 of 1 has the identity 9007199254740992"),
    ])
    func hugeIdentity(id: String, detail: String) throws {
        let contents = #"{"format": "stillwater-todo", "version": 1, "items": [{"id": \#(id), "title": "a", "done": false}]}"#
        folder.write(contents, to: "todo.json")
        let file = TodoFile(path: path)
        #expect(throws: TodoFileError.badIdentity(path: file.path, detail: detail + "; identities must be whole numbers from 1 to 9007199254740991")) {
            try file.load()
        }
        #expect(folder.read("todo.json") == contents)
        #expect(folder.names == ["todo.json"])
    }

    @Test("a nextID out of range is refused the same way")
    func hugeNextID() throws {
        let contents = #"{"format": "stillwater-todo", "version": 1, "nextID": 9223372036854775807, "items": []}"#
        folder.write(contents, to: "todo.json")
        #expect(throws: TodoFileError.self) { try TodoFile(path: path).load() }
        #expect(folder.read("todo.json") == contents)
    }

    @Test("the largest identity loads, and adding after it reuses a free identity instead of overflowing")
    func allocationNeverOverflows() throws {
        let last = TodoList.identities.upperBound
        folder.write(#"{"format": "stillwater-todo", "version": 1, "items": [{"id": 1, "title": "a", "done": false}, {"id": \#(last), "title": "b", "done": false}]}"#,
                     to: "todo.json")
        let file = TodoFile(path: path)
        let session = TodoSession(try file.load().list, file: file)
        #expect(session.list.nextID == last + 1)
        _ = try session.perform(.add("c"))
        _ = try session.perform(.add("d"))
        #expect(session.list.items.map(\.id) == [1, last, 2, 3])
        #expect(try file.load().list.items.map(\.id) == [1, last, 2, 3])

        // A list made in code with any identity at all does not trap either.
        var list = TodoList(items: [TodoItem(id: Int.max, title: "x")])
        #expect(list.nextID == last + 1)
        #expect(list.allocateID() == 1)
    }
}
