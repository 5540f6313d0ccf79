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
        ("done 12", .toggle(12)),
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
        TodoCommand.add("milk"), .toggle(2), .edit(3, "oat milk"), .delete(1), .move(3, .up), .filter(.done),
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
        ("add", "add needs a title, like \"add milk\""),
        ("toggle", "toggle needs an item number, like \"toggle 2\""),
        ("toggle two", "toggle: \"two\" is not an item number (1, 2, 3, …); try \"toggle 2\""),
        ("toggle 0", "toggle: \"0\" is not an item number (1, 2, 3, …); try \"toggle 2\""),
        ("toggle -1", "toggle: \"-1\" is not an item number (1, 2, 3, …); try \"toggle 2\""),
        ("delete 1.5", "delete: \"1.5\" is not an item number (1, 2, 3, …); try \"delete 1\""),
        ("toggle 99999999999999999999999", "toggle: \"99999999999999999999999\" is not an item number (1, 2, 3, …); try \"toggle 2\""),
        ("toggle 2 3", "toggle: unexpected \"3\" at the end"),
        ("edit 2", "edit needs a title, like \"edit 2 oat milk\""),
        ("move 3", "move needs up or down, like \"move 3 up\""),
        ("move 3 left", "move: \"left\" is not up or down; try \"move 3 up\""),
        ("move up 3", "move: \"up\" is not an item number (1, 2, 3, …); try \"move 3 up\""),
        ("filter", "filter needs all, active or done, like \"filter done\""),
        ("filter todo", "filter: \"todo\" is not all, active or done; try \"filter done\""),
        ("undo 2", "undo: unexpected \"2\" at the end"),
    ])
    func refused(line: String, message: String) {
        #expect(throws: CommandError.self) { try TodoCommand.parse(line) }
        do {
            _ = try TodoCommand.parse(line)
        } catch {
            #expect(error.message == message)
        }
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
        for binding in Keymap.bindings { #expect(usage.contains(binding.explanation)) }
        for command in ["add TITLE", "toggle N", "edit N TITLE", "delete N", "move N up|down", "filter", "undo", "list"] {
            #expect(usage.contains(command))
        }
    }
}
