import Testing
@testable import TodoCore

@Suite("TodoCommand parsing")
struct TodoCommandTests {
    @Test("each command parses, with its aliases and in any case", arguments: [
        ("add milk", TodoCommand.add("milk")),
        ("a  oat   milk ", .add("oat   milk")),
        ("ADD Milk", .add("Milk")),
        ("toggle 2", .toggle(2)),
        ("x 2", .toggle(2)),
        ("done 12", .done(12)),
        ("Done 1", .done(1)),
        ("undone 3", .undone(3)),
        ("UNDONE 3", .undone(3)),
        ("edit 3 oat milk", .edit(3, "oat milk")),
        ("delete 1", .delete(1)),
        ("rm 1", .delete(1)),
        ("del 1", .delete(1)),
        ("move 3 up", .move(3, .up)),
        ("Move 3 DOWN", .move(3, .down)),
        ("filter done", .filter(.done)),
        ("filter active", .filter(.active)),
        ("filter all", .filter(.all)),
        ("undo", .undo),
        ("redo", .redo),
        ("list", .list),
        ("ls", .list),
        ("help", .help),
        ("quit", .quit),
        ("exit", .quit),
    ])
    func parses(line: String, command: TodoCommand) throws {
        #expect(try TodoCommand.parse(line) == command)
    }

    @Test("a command prints as it is typed, and parses back to itself", arguments: [
        TodoCommand.add("milk"), .toggle(2), .done(2), .undone(2), .edit(3, "oat milk"), .delete(1), .move(3, .up), .filter(.done),
        .undo, .redo, .list, .help, .quit,
    ])
    func roundTrip(command: TodoCommand) throws {
        #expect(try TodoCommand.parse(command.description) == command)
    }

    @Test("blank lines and comments are no command", arguments: ["", "   ", "\t", "# a comment", "  #add milk"])
    func nothing(line: String) throws {
        #expect(try TodoCommand.parse(line) == nil)
    }

    @Test("a bad line is refused with a message that says what is wrong", arguments: [
        ("frob 2", "unknown command \"frob\"; type \"help\" for the list of commands"),
        ("add", "add needs a title, like: add milk"),
        ("toggle", "toggle needs an item number, like: toggle 2"),
        ("toggle x", "toggle needs an item number, like: toggle 2 (not \"x\")"),
        ("toggle two", "toggle needs an item number, like: toggle 2 (not \"two\")"),
        ("toggle 0", "toggle needs an item number, like: toggle 2 (not \"0\")"),
        ("toggle -1", "toggle needs an item number, like: toggle 2 (not \"-1\")"),
        ("done", "done needs an item number, like: done 2"),
        ("undone first", "undone needs an item number, like: undone 2 (not \"first\")"),
        ("delete 1.5", "delete needs an item number, like: delete 1 (not \"1.5\")"),
        ("toggle 99999999999999999999999", "toggle needs an item number, like: toggle 2 (not \"99999999999999999999999\")"),
        ("toggle 2 3", "toggle does not take \"3\" at the end; write it like: toggle 2"),
        ("done 2 please", "done does not take \"please\" at the end; write it like: done 2"),
        ("edit 2", "edit needs a title, like: edit 2 oat milk"),
        ("move 3", "move needs up or down, like: move 3 up"),
        ("move 3 left", "move needs up or down, like: move 3 up (not \"left\")"),
        ("move up 3", "move needs an item number, like: move 3 up (not \"up\")"),
        ("move 3 up now", "move does not take \"now\" at the end; write it like: move 3 up"),
        ("filter", "filter needs all, active or done, like: filter done"),
        ("filter todo", "filter needs all, active or done, like: filter done (not \"todo\")"),
        ("undo 2", "undo does not take \"2\" at the end; write it like: undo"),
    ])
    func refused(line: String, message: String) {
        #expect(throws: CommandError.self) { try TodoCommand.parse(line) }
        do {
            _ = try TodoCommand.parse(line)
        } catch {
            #expect(error.message == message)
        }
    }

    @Test("done and undone set the state; on an item already in it they are a note, not a change")
    func doneAndUndone() throws {
        let session = TodoSession(TodoList(titles: ["milk", "eggs"]))
        #expect(try session.perform(.done(2)) == .changed("item 2 \"eggs\" is done"))
        #expect(try session.perform(.done(2)) == .unchanged("item 2 \"eggs\" is already done"))
        #expect(try session.perform(.undone(1)) == .unchanged("item 1 \"milk\" is already not done"))
        #expect(session.shownTitles == ["milk", "x eggs"])
        #expect(session.history.canUndo)
        #expect(session.undo())
        #expect(!session.history.canUndo, "the two notes recorded nothing to undo")
        #expect(try session.perform(.toggle(1)) == .changed("item 1 \"milk\" is done"))
        #expect(try session.perform(.toggle(1)) == .changed("item 1 \"milk\" is not done"))
        #expect(try session.perform(.done(1)) == .changed("item 1 \"milk\" is done"))
        #expect(try session.perform(.undone(1)) == .changed("item 1 \"milk\" is not done"))
        #expect(session.shownTitles == ["milk", "eggs"])
        #expect(throws: CommandError.noSuchItem(number: 3, rowCount: 2)) { try session.perform(.done(3)) }
    }

    @Test("the command reference lists done, undone and toggle")
    func reference() {
        for command in ["done N", "undone N", "toggle N"] { #expect(TodoCommand.reference.contains(command)) }
    }

    @Test("an item number outside the list says which numbers there are")
    func noSuchItemMessages() {
        #expect(CommandError.noSuchItem(number: 3, rowCount: 0).message == "there is no item 3: the list shows no items")
        #expect(CommandError.noSuchItem(number: 3, rowCount: 1).message == "there is no item 3: the list shows only item 1")
        #expect(CommandError.noSuchItem(number: 9, rowCount: 4).message == "there is no item 9: the list shows items 1 to 4")
    }
}

@Suite("TodoOptions")
struct TodoOptionsTests {
    @Test("the file option comes in three spellings")
    func file() throws {
        #expect(try TodoOptions.parse(["--file", "a.json"]) == TodoOptions(file: "a.json"))
        #expect(try TodoOptions.parse(["-f", "a.json"]) == TodoOptions(file: "a.json"))
        #expect(try TodoOptions.parse(["--file=a.json"]) == TodoOptions(file: "a.json"))
        #expect(try TodoOptions.parse([]) == TodoOptions())
        #expect(try TodoOptions.parse(["-h"]).showsHelp)
        #expect(try TodoOptions.parse(["--quiet"]) == TodoOptions(isQuiet: true))
        #expect(try TodoOptions.parse(["-q", "-f", "a.json"]) == TodoOptions(file: "a.json", isQuiet: true))
        #expect(try !TodoOptions.parse(["-f", "a.json"]).isQuiet)
    }

    @Test("an unknown argument, or --file without a path, is refused")
    func refused() {
        #expect(throws: OptionError.unknown("--fil")) { try TodoOptions.parse(["--fil", "x"]) }
        #expect(throws: OptionError.missingPath("--file")) { try TodoOptions.parse(["--file"]) }
        #expect(throws: OptionError.missingPath("--file")) { try TodoOptions.parse(["--file="]) }
    }

    @Test("the usage explains both modes, every key and every command")
    func usage() {
        let usage = TodoOptions.usage
        #expect(usage.contains("In a terminal"))
        #expect(usage.contains("not a terminal"))
        #expect(usage.contains("--file PATH"))
        #expect(usage.contains("-q, --quiet"))
        for binding in Keymap.bindings { #expect(usage.contains(binding.explanation)) }
        for command in ["add TITLE", "toggle N", "done N", "undone N", "edit N TITLE", "delete N", "move N up|down", "filter", "undo", "list"] {
            #expect(usage.contains(command))
        }
    }
}
