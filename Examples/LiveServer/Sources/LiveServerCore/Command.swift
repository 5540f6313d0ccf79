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

/// Why a client frame was refused; sent back as an error frame.
public struct CommandRejection: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, in words.
    public var message: String
    /// The refused frame's reference number, when it could be read: the error frame echoes it.
    public var ref: Int?

    /// Creates a rejection.
    public init(_ message: String, ref: Int? = nil) {
        self.message = message
        self.ref = ref
    }

    /// The message.
    public var description: String { message }
}

/// A decoded client frame: the command, the client's optional reference number (echoed in the
/// acknowledgement or error frame), and the client's optional id for the command (a retried id is
/// answered, never applied twice).
public struct ClientFrame: Equatable, Sendable {
    /// What the client asks for.
    public var command: BoardCommand
    /// The client's number for this frame, if it gave one.
    public var ref: Int?
    /// The client's id for this command, if it gave one: 1 to 64 ASCII letters, digits, `-` and `_`.
    /// The server remembers the ids of the latest ``RecentCommands/capacity`` accepted commands.
    public var cid: String?

    /// Creates a frame.
    public init(command: BoardCommand, ref: Int? = nil, cid: String? = nil) {
        self.command = command
        self.ref = ref
        self.cid = cid
    }

    /// The wire shape: every field optional (a `null` is taken as absent), checked by ``decode(_:)``.
    private struct Wire {
        var type: String?
        var text: String?
        var id: String?
        var to: Int?
        var title: String?
        var ref: Int?
        var cid: String?

        init() {}

        /// Reads the fields of a JSON object; `nil` when `value` is not an object or a field has the
        /// wrong type. Other fields are ignored.
        init?(_ value: JSONValue) {
            guard case .object = value else { return nil }
            func string(_ key: String) -> String?? {
                switch value[key] {
                case nil, .null?: .some(nil)
                case .string(let text)?: .some(text)
                default: nil
                }
            }
            func int(_ key: String) -> Int?? {
                switch value[key] {
                case nil, .null?: .some(nil)
                case let number?: number.int.map { .some($0) }
                }
            }
            guard let type = string("type"), let text = string("text"), let id = string("id"), let to = int("to"),
                  let title = string("title"), let ref = int("ref"), let cid = string("cid")
            else { return nil }
            (self.type, self.text, self.id, self.to, self.title, self.ref, self.cid) = (type, text, id, to, title, ref, cid)
        }
    }

    /// Decodes and checks a text frame: its size, its JSON, its type and the fields that type needs,
    /// and the length limits. Whether ids exist and indexes are in range is checked when the command is
    /// reduced, against the board as it is then.
    ///
    /// - Throws: ``CommandRejection`` with `ref` whenever one can be read: a frame whose fields do not
    ///   fit, or that is not whole JSON, has its `ref` read on its own (see the README's protocol).
    public static func decode(_ text: String) throws(CommandRejection) -> ClientFrame {
        guard text.utf8.count <= Limits.frame else {
            throw CommandRejection("frame of \(text.utf8.count) bytes is over the limit of \(Limits.frame)",
                                   ref: readRef(text))
        }
        guard let value = try? JSONReader.parse(text), let wire = Wire(value) else {
            throw CommandRejection("not a JSON object of the expected shape", ref: readRef(text))
        }
        func refuse(_ message: String) -> CommandRejection { CommandRejection(message, ref: wire.ref) }
        func need<T>(_ value: T?, _ name: String) throws(CommandRejection) -> T {
            guard let value else { throw refuse("\(wire.type?.prefix(32) ?? "?") needs \"\(name)\"") }
            return value
        }
        if let cid = wire.cid, !isCommandID(cid) {
            throw refuse("\"cid\" must be 1 to 64 letters, digits, - or _")
        }
        let command: BoardCommand
        switch wire.type {
        case "add": command = .add(text: try need(wire.text, "text"))
        case "toggle": command = .toggle(id: try need(wire.id, "id"))
        case "rename": command = .rename(id: try need(wire.id, "id"), text: try need(wire.text, "text"))
        case "move": command = .move(id: try need(wire.id, "id"), to: try need(wire.to, "to"))
        case "delete": command = .delete(id: try need(wire.id, "id"))
        case "setTitle": command = .setTitle(try need(wire.title, "title"))
        case "hello": throw refuse("\"hello\" is only accepted as the first frame")
        case nil: throw refuse("missing \"type\"")
        case let other?:
            throw refuse("unknown type \"\(other.prefix(32))\"")
        }
        do throws(CommandRejection) {
            return ClientFrame(command: try command.checked(), ref: wire.ref, cid: wire.cid)
        } catch {
            throw refuse(error.message)
        }
    }

    /// The `ref` of a frame that did not decode as a whole: the integer `ref` of a JSON object, or, when
    /// the text is not whole JSON (cut short, a stray comma), the first integer `"ref":` among the
    /// outermost object's keys that can be read before the damage.
    static func readRef(_ text: String) -> Int? {
        guard text.utf8.count <= Limits.frameLimit else { return nil }
        if let value = try? JSONReader.parse(text) { return value["ref"]?.int }
        return scanRef(Array(text.utf8))
    }

    /// Scans `bytes` for a key `"ref"` at the first level of an object (a string after its `{` or a `,`),
    /// followed by `:` and an integer; strings (escapes included) and nesting are followed, nothing else
    /// is checked.
    private static func scanRef(_ bytes: [UInt8]) -> Int? {
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var depth = 0, index = 0
        // Whether the outermost value is an object, and whether its next string is a key.
        var inObject = false, keyNext = false
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if depth == 0 {
                    inObject = bytes[index] == UInt8(ascii: "{")
                    keyNext = inObject
                }
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            case UInt8(ascii: ","):
                if depth == 1 { keyNext = inObject }
                index += 1
            case quote:
                let start = index + 1
                var end = start
                while end < bytes.count, bytes[end] != quote { end += bytes[end] == backslash ? 2 : 1 }
                guard end < bytes.count else { return nil }
                index = end + 1
                let isKey = depth == 1 && keyNext
                if depth == 1 { keyNext = false }
                guard isKey, bytes[start..<end].elementsEqual("ref".utf8) else { continue }
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { continue }
                index += 1
                while index < bytes.count, isSpace(bytes[index]) { index += 1 }
                var digits = index
                if digits < bytes.count, bytes[digits] == UInt8(ascii: "-") { digits += 1 }
                var digitsEnd = digits
                while digitsEnd < bytes.count, bytes[digitsEnd] >= 0x30, bytes[digitsEnd] <= 0x39 { digitsEnd += 1 }
                // A number cut at the end of the text, or followed by a fraction or exponent, is no integer.
                guard digitsEnd > digits, digitsEnd < bytes.count,
                      ![UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[digitsEnd])
                else { continue }
                return Int(String(decoding: bytes[index..<digitsEnd], as: UTF8.self))
            default:
                index += 1
            }
        }
        return nil
    }

    /// Whether `cid` is a well-formed command id: 1 to 64 ASCII letters, digits, `-` and `_`.
    public static func isCommandID(_ cid: String) -> Bool {
        !cid.isEmpty && cid.utf8.count <= 64 && cid.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
    }

    /// Encodes the frame as a client sends it.
    public func encoded() -> String {
        var json = JSONWriter(capacity: 96)
        func field(_ key: StaticString, _ value: String) {
            json.raw(key)
            json.string(value)
        }
        switch command {
        case .add(let text): json.raw(#"{"type":"add""#); field(#","text":"#, text)
        case .toggle(let id): json.raw(#"{"type":"toggle""#); field(#","id":"#, id)
        case .rename(let id, let text): json.raw(#"{"type":"rename""#); field(#","id":"#, id); field(#","text":"#, text)
        case .move(let id, let to):
            json.raw(#"{"type":"move""#)
            field(#","id":"#, id)
            json.raw(#","to":"#)
            json.int(to)
        case .delete(let id): json.raw(#"{"type":"delete""#); field(#","id":"#, id)
        case .setTitle(let title): json.raw(#"{"type":"setTitle""#); field(#","title":"#, title)
        }
        if let ref {
            json.raw(#","ref":"#)
            json.int(ref)
        }
        if let cid { field(#","cid":"#, cid) }
        json.raw("}")
        return json.text
    }
}

extension Board {
    /// Why `command` does not fit the board as it is now (an id that names no item, a move out of range,
    /// an add to a full board), or `nil` when ``apply(_:)`` would take it.
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

    /// Applies `command` if it fits the board as it is now, and says whether it did.
    ///
    /// A command that fits but changes nothing a client sees (a rename to the same text, a move to the
    /// same place) is accepted without a new version. A command that does not fit changes nothing.
    /// ``accept(_:id:)`` is the same with the command's id remembered.
    public mutating func apply(_ command: BoardCommand) -> Result<Int, CommandRejection> {
        if let rejection = rejection(of: command) { return .failure(rejection) }
        func index(of id: String) -> Int { items.firstIndex { $0.id == id }! }
        var changed = true
        switch command {
        case .add(let text):
            items.append(BoardItem(id: "i\(nextItemNumber)", text: text))
            nextItemNumber += 1
        case .toggle(let id):
            items[index(of: id)].done.toggle()
        case .rename(let id, let text):
            let at = index(of: id)
            changed = items[at].text != text
            items[at].text = text
        case .move(let id, let to):
            let at = index(of: id)
            changed = at != to
            items.insert(items.remove(at: at), at: to)
        case .delete(let id):
            items.remove(at: index(of: id))
        case .setTitle(let title):
            changed = self.title != title
            self.title = title
        }
        if changed { version += 1 }
        sequence += 1
        return .success(version)
    }

    /// Applies `command` like ``apply(_:)`` unless `id` names a command the board already accepted, and
    /// remembers `id` with the version the command made.
    ///
    /// - Returns: What became of the command: applied (with the version after it), a duplicate of an
    ///   accepted command (with the version that one made; nothing changes), or refused.
    public mutating func accept(_ command: BoardCommand, id: String?) -> CommandOutcome {
        if let id, let version = recentCommands[id] { return .duplicate(version: version) }
        switch apply(command) {
        case .success(let version):
            if let id { recentCommands.record(id, version: version) }
            return .applied(version: version)
        case .failure(let rejection):
            return .rejected(rejection)
        }
    }
}

/// What became of one client command.
public enum CommandOutcome: Equatable, Sendable {
    /// Applied and durable; the board then had this version.
    case applied(version: Int)
    /// Its id names a command applied before (at this version): answered, not applied again.
    case duplicate(version: Int)
    /// Refused: it does not fit the board as it is; nothing changed.
    case rejected(CommandRejection)
    /// Not applied because the server cannot record it now (the journal could not be written, or the
    /// server is shutting down); the client may send it again later.
    case unavailable(String)
}

/// A command as the store reduces it and the journal records it: the command and the client's id for it.
///
/// Only commands the board accepted are dispatched and journaled, so replaying the journal onto the board
/// it started from gives the same board, remembered ids included.
public struct BoardAction: Action, Codable, Equatable, Sendable {
    /// What to do.
    public var command: BoardCommand
    /// The client's id for the command, if it gave one.
    public var cid: String?

    /// Creates an action.
    public init(command: BoardCommand, cid: String? = nil) {
        self.command = command
        self.cid = cid
    }

    /// Applies the command to the board (see ``Board/accept(_:id:)``).
    public func reduce(_ state: inout Board) {
        _ = state.accept(command, id: cid)
    }
}
