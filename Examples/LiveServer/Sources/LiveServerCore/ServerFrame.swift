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

    private struct Wire: Codable {
        var type: String
        var board: String?
        var from: Int?
        var version: Int?
        var title: String?
        var items: [BoardItem]?
        var patch: ListPatch<BoardItem>?
        var ref: Int?
        var duplicate: Bool?
        var message: String?
        var code: String?
        var retry: Bool?

        enum CodingKeys: String, CodingKey {
            case type, board, from, version, title, items, ref, duplicate, message, code, retry
        }

        init(type: String) { self.type = type }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            board = try container.decodeIfPresent(String.self, forKey: .board)
            from = try container.decodeIfPresent(Int.self, forKey: .from)
            duplicate = try container.decodeIfPresent(Bool.self, forKey: .duplicate)
            code = try container.decodeIfPresent(String.self, forKey: .code)
            retry = try container.decodeIfPresent(Bool.self, forKey: .retry)
            version = try container.decodeIfPresent(Int.self, forKey: .version)
            title = try container.decodeIfPresent(String.self, forKey: .title)
            ref = try container.decodeIfPresent(Int.self, forKey: .ref)
            message = try container.decodeIfPresent(String.self, forKey: .message)
            if type == "patch" {
                patch = try container.decodeIfPresent(ListPatch<BoardItem>.self, forKey: .items)
            } else {
                items = try container.decodeIfPresent([BoardItem].self, forKey: .items)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(type, forKey: .type)
            try container.encodeIfPresent(board, forKey: .board)
            try container.encodeIfPresent(from, forKey: .from)
            try container.encodeIfPresent(version, forKey: .version)
            try container.encodeIfPresent(title, forKey: .title)
            try container.encodeIfPresent(items, forKey: .items)
            try container.encodeIfPresent(patch, forKey: .items)
            try container.encodeIfPresent(ref, forKey: .ref)
            try container.encodeIfPresent(duplicate, forKey: .duplicate)
            try container.encodeIfPresent(message, forKey: .message)
            try container.encodeIfPresent(code, forKey: .code)
            try container.encodeIfPresent(retry, forKey: .retry)
        }
    }

    /// The frame's JSON text.
    public func encoded() -> String {
        var wire: Wire
        switch self {
        case .snapshot(let view, let board):
            wire = Wire(type: "snapshot")
            wire.board = board
            wire.version = view.version
            wire.title = view.title
            wire.items = view.items
        case .patch(let from, let version, let title, let items):
            wire = Wire(type: "patch")
            wire.from = from
            wire.version = version
            wire.title = title
            wire.patch = items
        case .ack(let ref, let version, let duplicate):
            wire = Wire(type: "ack")
            wire.ref = ref
            wire.version = version
            wire.duplicate = duplicate ? true : nil
        case .error(let message, let ref, let code, let retry):
            wire = Wire(type: "error")
            wire.message = message
            wire.ref = ref
            wire.code = code
            wire.retry = retry ? true : nil
        }
        // Strings, numbers and arrays of them always encode.
        return String(decoding: (try? JSONEncoder().encode(wire)) ?? Data(), as: UTF8.self)
    }

    /// Reads a frame the server sent.
    ///
    /// - Throws: When the text is not one of the shapes.
    public static func decode(_ text: String) throws -> ServerFrame {
        let wire = try JSONDecoder().decode(Wire.self, from: Data(text.utf8))
        func need<T>(_ value: T?) throws -> T {
            guard let value else { throw CommandRejection("\(wire.type) frame is missing a field") }
            return value
        }
        switch wire.type {
        case "snapshot":
            return .snapshot(BoardView(version: try need(wire.version), title: try need(wire.title),
                                       items: try need(wire.items)), board: try need(wire.board))
        case "patch":
            return .patch(from: try need(wire.from), version: try need(wire.version), title: wire.title,
                          items: wire.patch)
        case "ack":
            return .ack(ref: try need(wire.ref), version: try need(wire.version), duplicate: wire.duplicate ?? false)
        case "error":
            return .error(message: try need(wire.message), ref: wire.ref, code: wire.code, retry: wire.retry ?? false)
        default: throw CommandRejection("unknown frame type \(wire.type)")
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
