import Foundation
import Stillwater

/// Bounds on what a client may send; a frame over a bound gets an error frame and changes nothing.
public enum Limits {
    /// The longest item text, in characters.
    public static let itemText = 200
    /// The longest board title, in characters.
    public static let title = 100
    /// The most items a board holds.
    public static let items = 500
    /// The longest client frame read and decoded, in UTF-8 bytes. Longer text frames get an error frame;
    /// frames over ``frameLimit`` close the connection.
    public static let frame = 4_096
    /// The largest message the WebSocket layer reads at all; a bigger one closes the connection.
    public static let frameLimit = 16_384
    /// How many of one connection's commands may wait for the journal at once; the connection reads no
    /// more frames until one is answered.
    public static let commandsInFlight = 64
}

/// An action a client asks for, decoded from its JSON frame (see the README for the shapes).
public enum BoardCommand: Codable, Equatable, Sendable {
    /// Appends an item with this text.
    case add(text: String)
    /// Flips an item's `done`.
    case toggle(id: String)
    /// Changes an item's text.
    case rename(id: String, text: String)
    /// Moves an item so that it ends at this index of the list after the move (`to` 0 makes it first).
    case move(id: String, to: Int)
    /// Removes an item.
    case delete(id: String)
    /// Changes the board's title.
    case setTitle(String)

    /// The JSON name of ``setTitle(_:)``'s value: `{"setTitle":{"title":"Groceries"}}`. The other cases'
    /// labels are their names (`{"add":{"text":"milk"}}`, `{"move":{"id":"i2","to":0}}`).
    private enum SetTitleCodingKeys: String, CodingKey {
        case _0 = "title"
    }

    /// The command with its texts trimmed of spaces and line breaks at both ends, once they and its id
    /// are checked against ``Limits``: a text is not empty and not too long, an id at most 32 bytes.
    /// Whether the id names an item is for the board to say (``Board/rejection(of:)``).
    ///
    /// ```swift
    /// print(try BoardCommand.add(text: "  milk ").checked())
    /// // Prints "add(text: "milk")"
    /// ```
    public func checked() throws(CommandRejection) -> BoardCommand {
        func text(_ value: String, _ name: String, limit: Int) throws(CommandRejection) -> String {
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw CommandRejection("\"\(name)\" is empty") }
            guard trimmed.count <= limit else {
                throw CommandRejection("\"\(name)\" has \(trimmed.count) characters, over the limit of \(limit)")
            }
            return trimmed
        }
        func id(_ value: String) throws(CommandRejection) -> String {
            guard value.utf8.count <= 32 else { throw CommandRejection("\"id\" is too long") }
            return value
        }
        switch self {
        case .add(let value): return .add(text: try text(value, "text", limit: Limits.itemText))
        case .toggle(let value): return .toggle(id: try id(value))
        case .rename(let value, let newText):
            return .rename(id: try id(value), text: try text(newText, "text", limit: Limits.itemText))
        case .move(let value, let to): return .move(id: try id(value), to: to)
        case .delete(let value): return .delete(id: try id(value))
        case .setTitle(let value): return .setTitle(try text(value, "title", limit: Limits.title))
        }
    }
}

/// Why a command was refused; its sender is told the message.
public struct CommandRejection: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, in words.
    public var message: String

    /// Creates a rejection.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension Board {
    /// Why `command` does not fit the board as it is now (an id that names no item, a move out of range,
    /// an add to a full board), or `nil` when it fits.
    public func rejection(of command: BoardCommand) -> CommandRejection? {
        func unknown(_ id: String) -> CommandRejection? {
            items.contains { $0.id == id } ? nil : CommandRejection("no item with id \"\(id.prefix(32))\"")
        }
        switch command {
        case .add:
            return items.count < Limits.items ? nil : CommandRejection("the board is full (\(Limits.items) items)")
        case .toggle(let id), .rename(let id, _), .delete(let id):
            return unknown(id)
        case .move(let id, let to):
            if let rejection = unknown(id) { return rejection }
            return to >= 0 && to < items.count ? nil : CommandRejection("index \(to) is out of range 0..<\(items.count)")
        case .setTitle:
            return nil
        }
    }

    /// Applies `command` if it fits the board as it is now (``rejection(of:)``); one that does not fit
    /// changes nothing. An added item records `author` as its ``BoardItem/addedBy``.
    public mutating func apply(_ command: BoardCommand, by author: String? = nil) {
        guard rejection(of: command) == nil else { return }
        func index(of id: String) -> Int { items.firstIndex { $0.id == id }! }
        switch command {
        case .add(let text):
            items.append(BoardItem(id: "i\(nextItemNumber)", text: text, addedBy: author))
            nextItemNumber += 1
        case .toggle(let id): items[index(of: id)].done.toggle()
        case .rename(let id, let text): items[index(of: id)].text = text
        case .move(let id, let to): items.insert(items.remove(at: index(of: id)), at: to)
        case .delete(let id): items.remove(at: index(of: id))
        case .setTitle(let title): self.title = title
        }
    }
}

/// A command as the store reduces it and the journal records it (inside the library's `LiveEntry`,
/// which carries the client's id).
///
/// Only commands the board accepted are journaled, so replaying the journal onto the board it started
/// from gives the same board.
public struct BoardAction: Action, Codable, Equatable, Sendable {
    /// What to do.
    public var command: BoardCommand
    /// The name of the member who sent an add (the item's ``BoardItem/addedBy``); nil for the other
    /// commands, and in records written before the board had names.
    public var by: String?

    /// Creates an action.
    public init(command: BoardCommand, by: String? = nil) {
        self.command = command
        self.by = by
    }

    /// Applies the command to the board (see ``Board/apply(_:by:)``).
    public func reduce(_ state: inout Board) {
        state.apply(command, by: by)
    }
}
