import Foundation
import Stillwater

/// A frame the server sends a client (JSON text; the README lists the shapes).
public enum ServerFrame: Equatable, Sendable {
    /// The whole view of the board with this identity, sent first (unless the client resumes).
    case snapshot(BoardView, board: String)
    /// What changed from version `from` (the version the client's view must have) to `version`: the new
    /// title if it changed and the item list's patch if it changed (a resumed client whose version is
    /// the newest gets a patch with neither).
    case patch(from: Int, version: Int, title: String?, items: ListPatch<BoardItem>?)
    /// The command with this reference number was applied (or, when `duplicate`, had been applied
    /// before and was not applied again); the board then had this version.
    case ack(ref: Int, version: Int, duplicate: Bool = false)
    /// A frame was refused and changed nothing (`ref` is the frame's, when it had one). `code` names a
    /// refusal that ends the connection (`unauthorized`); `retry` says the command was not applied only
    /// because the server could not take it now, and may be sent again later.
    case error(message: String, ref: Int?, code: String? = nil, retry: Bool = false)

    /// The frame's JSON text (written directly: see ``JSONWriter``).
    ///
    /// - Complexity: O(n) in the text's length; one buffer, grown as needed.
    public func encoded() -> String {
        var json = JSONWriter()
        switch self {
        case .snapshot(let view, let board):
            json.raw(#"{"type":"snapshot","board":"#)
            json.string(board)
            json.raw(#","version":"#)
            json.int(view.version)
            json.raw(#","title":"#)
            json.string(view.title)
            json.raw(#","items":"#)
            Self.write(view.items, to: &json)
        case .patch(let from, let version, let title, let items):
            json.raw(#"{"type":"patch","from":"#)
            json.int(from)
            json.raw(#","version":"#)
            json.int(version)
            if let title {
                json.raw(#","title":"#)
                json.string(title)
            }
            if let items {
                json.raw(#","items":{"changes":{"#)
                let changes = items.changeset
                var first = true
                func key(_ name: StaticString) {
                    if !first { json.raw(",") }
                    first = false
                    json.raw(name)
                }
                if !changes.deletes.isEmpty { key(#""deletes":"#); json.ints(changes.deletes) }
                if !changes.inserts.isEmpty { key(#""inserts":"#); json.ints(changes.inserts) }
                if !changes.moves.isEmpty {
                    key(#""moves":["#)
                    for (index, move) in changes.moves.enumerated() {
                        if index > 0 { json.raw(",") }
                        json.ints([move.from, move.to])
                    }
                    json.raw("]")
                }
                if !changes.updates.isEmpty { key(#""updates":"#); json.ints(changes.updates) }
                json.raw(#"},"elements":"#)
                Self.write(items.elements, to: &json)
                json.raw("}")
            }
        case .ack(let ref, let version, let duplicate):
            json.raw(#"{"type":"ack","ref":"#)
            json.int(ref)
            json.raw(#","version":"#)
            json.int(version)
            if duplicate { json.raw(#","duplicate":true"#) }
        case .error(let message, let ref, let code, let retry):
            json.raw(#"{"type":"error","message":"#)
            json.string(message)
            if let ref {
                json.raw(#","ref":"#)
                json.int(ref)
            }
            if let code {
                json.raw(#","code":"#)
                json.string(code)
            }
            if retry { json.raw(#","retry":true"#) }
        }
        json.raw("}")
        return json.text
    }

    private static func write(_ items: [BoardItem], to json: inout JSONWriter) {
        json.raw("[")
        for (index, item) in items.enumerated() {
            json.raw(index == 0 ? #"{"id":"# : #",{"id":"#)
            json.string(item.id)
            json.raw(#","text":"#)
            json.string(item.text)
            json.raw(item.done ? #","done":true}"# : #","done":false}"#)
        }
        json.raw("]")
    }

    /// Reads a frame the server sent.
    ///
    /// - Throws: ``CommandRejection`` when the text is not JSON or not one of the shapes. A patch's
    ///   indexes are checked when it is applied (``BoardReplica/apply(_:)``).
    public static func decode(_ text: String) throws -> ServerFrame {
        let object: JSONValue
        do {
            object = try JSONReader.parse(text)
        } catch {
            throw CommandRejection("not JSON: \(text.prefix(80))")
        }
        let type = object["type"]?.string ?? "?"
        func need<T>(_ value: T?) throws -> T {
            guard let value else { throw CommandRejection("\(type) frame is missing a field") }
            return value
        }
        switch type {
        case "snapshot":
            let view = BoardView(version: try need(object["version"]?.int), title: try need(object["title"]?.string),
                                 items: try items(try need(object["items"])))
            return .snapshot(view, board: try need(object["board"]?.string))
        case "patch":
            var patch: ListPatch<BoardItem>?
            if let value = object["items"] {
                // Indexes are checked against the list when the patch is applied (`ListPatch.applied(to:)`).
                let changes = try need(value["changes"])
                func list(_ name: String) throws -> [Int] {
                    try (changes[name].map { try need($0.array) } ?? []).map { try need($0.int) }
                }
                let moves = try (changes["moves"].map { try need($0.array) } ?? []).map { pair in
                    let ends = try need(pair.array).map { try need($0.int) }
                    guard ends.count == 2 else { throw CommandRejection("a move is [from, to]") }
                    return Changeset.Move(from: ends[0], to: ends[1])
                }
                let changeset = Changeset(deletes: try list("deletes"), inserts: try list("inserts"), moves: moves,
                                          updates: try list("updates"))
                let elements = try items(try need(value["elements"]))
                guard elements.count == changeset.inserts.count + changeset.moves.count + changeset.updates.count else {
                    throw CommandRejection("a patch names \(elements.count) elements for its changeset's \(changeset.inserts.count + changeset.moves.count + changeset.updates.count)")
                }
                patch = ListPatch(changeset: changeset, elements: elements)
            }
            return .patch(from: try need(object["from"]?.int), version: try need(object["version"]?.int),
                          title: object["title"]?.string, items: patch)
        case "ack":
            return .ack(ref: try need(object["ref"]?.int), version: try need(object["version"]?.int),
                        duplicate: object["duplicate"]?.bool ?? false)
        case "error":
            return .error(message: try need(object["message"]?.string), ref: object["ref"]?.int,
                          code: object["code"]?.string, retry: object["retry"]?.bool ?? false)
        default: throw CommandRejection("unknown frame type \(type.prefix(32))")
        }
        func items(_ value: JSONValue) throws -> [BoardItem] {
            try need(value.array).map { item in
                BoardItem(id: try need(item["id"]?.string), text: try need(item["text"]?.string),
                          done: try need(item["done"]?.bool))
            }
        }
    }
}

/// A client's copy of the board, built from a snapshot and patches exactly as the page's script does.
public struct BoardReplica: Sendable {
    /// The view as the client has it; `nil` before the snapshot.
    public private(set) var view: BoardView?
    /// The identity of the board the view is of; `nil` before the snapshot.
    public private(set) var board: String?

    /// Creates an empty replica.
    public init() {}

    /// Applies a snapshot or patch frame; other frames leave the replica as it is.
    ///
    /// - Throws: ``ListPatchError`` or ``CommandRejection`` when a patch does not fit: it comes before
    ///   the snapshot, or its `from` is not the replica's version.
    public mutating func apply(_ frame: ServerFrame) throws {
        switch frame {
        case .snapshot(let snapshot, let board):
            view = snapshot
            self.board = board
        case .patch(let from, let version, let title, let items):
            guard var next = view else { throw CommandRejection("a patch before the snapshot") }
            guard next.version == from else {
                throw CommandRejection("a patch from version \(from) to a replica at version \(next.version)")
            }
            next.version = version
            if let title { next.title = title }
            if let items { try items.apply(to: &next.items) }
            view = next
        case .ack, .error:
            break
        }
    }
}
