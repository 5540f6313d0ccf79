/// One line of the command language that `todo` reads when its input is not a terminal.
///
/// Item numbers are the positions shown in front of the rows (from 1, counted in the filtered list), so
/// `toggle 2` means "the second row on the screen". ``TodoSession/perform(_:)`` checks them against the
/// list.
///
/// ```swift
/// print(try TodoCommand.parse("move 3 up")!)
/// // Prints "move 3 up"
/// ```
public enum TodoCommand: Equatable, Sendable, CustomStringConvertible {
    /// `add TITLE`: append an item.
    case add(String)
    /// `toggle N`: mark row N done when it is not, not done when it is.
    case toggle(Int)
    /// `done N`: mark row N done (a note, not a change, when it already is).
    case done(Int)
    /// `undone N`: mark row N not done (a note, not a change, when it already is not).
    case undone(Int)
    /// `edit N TITLE`: give row N a new title.
    case edit(Int, String)
    /// `delete N`: remove row N.
    case delete(Int)
    /// `move N up|down`: move row N by one row.
    case move(Int, MoveDirection)
    /// `filter all|active|done`: choose which items are shown.
    case filter(TodoFilter)
    /// `undo`: step back over the last change.
    case undo
    /// `redo`: step forward over the last undo.
    case redo
    /// `list`: print the list.
    case list
    /// `help`: print the commands.
    case help
    /// `quit`: stop reading commands.
    case quit

    /// The commands, one per line, as `help` prints them.
    public static let reference = """
        add TITLE           add an item at the end (also: a TITLE)
        done N              mark item N done
        undone N            mark item N not done again
        toggle N            mark item N done, or not done if it was (also: x N)
        edit N TITLE        give item N a new title
        delete N            delete item N (also: rm N, del N)
        move N up|down      move item N one row up or down
        filter all|active|done
                            show every item, the ones left, or the done ones
        undo, redo          step back over the last change, or forward again
        list                print the list
        help                print this help
        quit                stop (the end of the input stops too)
        N is the number shown in front of an item; lines starting with # are ignored.
        """

    /// The command written on `line`, `nil` for a blank line or a comment (`# ...`).
    ///
    /// Command words are case-insensitive; titles keep their case and are cleaned with
    /// ``TodoItem/cleanTitle(_:)``.
    ///
    /// - Throws: ``CommandError`` naming what is wrong, for an unknown command, a missing or
    ///   malformed argument, or extra words.
    public static func parse(_ line: some StringProtocol) throws(CommandError) -> TodoCommand? {
        let text = TodoItem.cleanTitle(line)
        guard !text.isEmpty, !text.hasPrefix("#") else { return nil }
        let word = String(text.prefix { !$0.isWhitespace })
        let rest = text.dropFirst(word.count).trimmingWhitespace()
        var arguments = Arguments(command: word.lowercased(), text: rest)
        switch word.lowercased() {
        case "add", "a": return .add(try arguments.title(example: "add milk"))
        case "toggle", "x": return .toggle(try arguments.finalNumber(example: "toggle 2"))
        case "done": return .done(try arguments.finalNumber(example: "done 2"))
        case "undone": return .undone(try arguments.finalNumber(example: "undone 2"))
        case "edit":
            let number = try arguments.number(example: "edit 2 oat milk")
            return .edit(number, try arguments.title(example: "edit \(number) oat milk"))
        case "delete", "del", "rm": return .delete(try arguments.finalNumber(example: "delete 1"))
        case "move":
            let number = try arguments.number(example: "move 3 up")
            return .move(number, try arguments.choice(of: MoveDirection.self, example: "move \(number) up"))
        case "filter": return .filter(try arguments.choice(of: TodoFilter.self, example: "filter done"))
        case "undo": try arguments.end(example: "undo"); return .undo
        case "redo": try arguments.end(example: "redo"); return .redo
        case "list", "ls": try arguments.end(example: "list"); return .list
        case "help", "?": try arguments.end(example: "help"); return .help
        case "quit", "exit", "q": try arguments.end(example: "quit"); return .quit
        default: throw CommandError.unknownCommand(word)
        }
    }

    /// The command as it would be typed: `move 3 up`.
    public var description: String {
        switch self {
        case .add(let title): "add \(title)"
        case .toggle(let number): "toggle \(number)"
        case .done(let number): "done \(number)"
        case .undone(let number): "undone \(number)"
        case .edit(let number, let title): "edit \(number) \(title)"
        case .delete(let number): "delete \(number)"
        case .move(let number, let direction): "move \(number) \(direction.rawValue)"
        case .filter(let filter): "filter \(filter.rawValue)"
        case .undo: "undo"
        case .redo: "redo"
        case .list: "list"
        case .help: "help"
        case .quit: "quit"
        }
    }
}

/// Why a command line was refused. Its ``message`` is a sentence that says what the command expected,
/// with a correct example.
///
/// ```swift
/// do { _ = try TodoCommand.parse("toggle x") } catch { print(error.message) }
/// // Prints "toggle needs an item number, like: toggle 2 (not \"x\")"
/// ```
public enum CommandError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The first word is not a command.
    case unknownCommand(String)
    /// A required argument is missing; `usage` is an example of the command.
    case missingArgument(command: String, expected: String, usage: String)
    /// An argument is not what the command takes (a number that is not one, a direction that is not
    /// `up` or `down`).
    case badArgument(command: String, found: String, expected: String, usage: String)
    /// Words after the last argument; `usage` is an example of the command.
    case extraWords(command: String, found: String, usage: String)
    /// A well-formed item number that is not on the list.
    case noSuchItem(number: Int, rowCount: Int)

    /// A one-line explanation, ready to print.
    public var message: String {
        switch self {
        case .unknownCommand(let word):
            "unknown command \"\(word)\"; type \"help\" for the list of commands"
        case .missingArgument(let command, let expected, let usage):
            "\(command) needs \(expected), like: \(usage)"
        case .badArgument(let command, let found, let expected, let usage):
            "\(command) needs \(expected), like: \(usage) (not \"\(found)\")"
        case .extraWords(let command, let found, let usage):
            "\(command) does not take \"\(found)\" at the end; write it like: \(usage)"
        case .noSuchItem(let number, 0):
            "there is no item \(number): the list shows no items"
        case .noSuchItem(let number, 1):
            "there is no item \(number): the list shows only item 1"
        case .noSuchItem(let number, let count):
            "there is no item \(number): the list shows items 1 to \(count)"
        }
    }

    /// The same as ``message``.
    public var description: String { message }
}

/// The words after a command word, consumed from the left.
private struct Arguments {
    let command: String
    var text: String

    init(command: String, text: String) {
        self.command = command
        self.text = text
    }

    /// Takes the next word, if any.
    private mutating func word() -> String? {
        guard !text.isEmpty else { return nil }
        let word = String(text.prefix { !$0.isWhitespace })
        text = text.dropFirst(word.count).trimmingWhitespace()
        return word
    }

    /// Takes an item number: digits only, more than zero.
    mutating func number(example: String) throws(CommandError) -> Int {
        guard let word = word() else {
            throw .missingArgument(command: command, expected: "an item number", usage: example)
        }
        guard word.allSatisfy(\.isASCII), word.allSatisfy(\.isNumber), let number = Int(word), number > 0 else {
            throw .badArgument(command: command, found: word, expected: "an item number", usage: example)
        }
        return number
    }

    /// Takes an item number that must be the last word.
    mutating func finalNumber(example: String) throws(CommandError) -> Int {
        let number = try number(example: example)
        try end(example: example)
        return number
    }

    /// Takes the rest of the line as a title.
    mutating func title(example: String) throws(CommandError) -> String {
        defer { text = "" }
        guard !text.isEmpty else { throw .missingArgument(command: command, expected: "a title", usage: example) }
        return text
    }

    /// Takes one of the cases of `choice`, by its raw value (case-insensitive), as the last word.
    mutating func choice<Choice: CaseIterable & RawRepresentable<String>>(
        of choice: Choice.Type, example: String
    ) throws(CommandError) -> Choice {
        let names = Choice.allCases.map(\.rawValue)
        let expected = names.dropLast().joined(separator: ", ") + " or " + names.last!
        guard let word = word() else { throw .missingArgument(command: command, expected: expected, usage: example) }
        guard let value = Choice(rawValue: word.lowercased()) else {
            throw .badArgument(command: command, found: word, expected: expected, usage: example)
        }
        try end(example: example)
        return value
    }

    /// Checks that nothing is left; `example` shows the command written right.
    func end(example: String) throws(CommandError) {
        if !text.isEmpty { throw .extraWords(command: command, found: text, usage: example) }
    }
}
