import Foundation
import Stillwater

/// A frame the server sends a client (JSON text; the README lists the shapes).
public enum ServerFrame: Equatable, Sendable {
    /// The whole view, sent once, first.
    case snapshot(BoardView)
    /// What changed since the previous frame: the new title if it changed, the item list's patch if it
    /// changed, and the version the client's view now has.
    case patch(version: Int, title: String?, items: ListPatch<BoardItem>?)
    /// The command with this reference number was applied; the board then had this version.
    case ack(ref: Int, version: Int)
    /// A frame was refused and changed nothing (`ref` is the frame's, when it had one).
    case error(message: String, ref: Int?)

    private struct Wire: Codable {
        var type: String
        var version: Int?
        var title: String?
        var items: [BoardItem]?
        var patch: ListPatch<BoardItem>?
        var ref: Int?
        var message: String?

        enum CodingKeys: String, CodingKey {
            case type, version, title, items, ref, message
        }

        init(type: String) { self.type = type }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
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
            try container.encodeIfPresent(version, forKey: .version)
            try container.encodeIfPresent(title, forKey: .title)
            try container.encodeIfPresent(items, forKey: .items)
            try container.encodeIfPresent(patch, forKey: .items)
            try container.encodeIfPresent(ref, forKey: .ref)
            try container.encodeIfPresent(message, forKey: .message)
        }
    }

    /// The frame's JSON text.
    public func encoded() -> String {
        var wire: Wire
        switch self {
        case .snapshot(let view):
            wire = Wire(type: "snapshot")
            wire.version = view.version
            wire.title = view.title
            wire.items = view.items
        case .patch(let version, let title, let items):
            wire = Wire(type: "patch")
            wire.version = version
            wire.title = title
            wire.patch = items
        case .ack(let ref, let version):
            wire = Wire(type: "ack")
            wire.ref = ref
            wire.version = version
        case .error(let message, let ref):
            wire = Wire(type: "error")
            wire.message = message
            wire.ref = ref
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
                                       items: try need(wire.items)))
        case "patch": return .patch(version: try need(wire.version), title: wire.title, items: wire.patch)
        case "ack": return .ack(ref: try need(wire.ref), version: try need(wire.version))
        case "error": return .error(message: try need(wire.message), ref: wire.ref)
        default: throw CommandRejection("unknown frame type \(wire.type)")
        }
    }
}

/// A client's copy of the board, built from a snapshot and patches exactly as the page's script does.
public struct BoardReplica: Sendable {
    /// The view as the client has it; `nil` before the snapshot.
    public private(set) var view: BoardView?

    /// Creates an empty replica.
    public init() {}

    /// Applies a snapshot or patch frame; other frames leave the replica as it is.
    ///
    /// - Throws: ``ListPatchError`` or ``CommandRejection`` when a patch does not fit (or comes first).
    public mutating func apply(_ frame: ServerFrame) throws {
        switch frame {
        case .snapshot(let snapshot):
            view = snapshot
        case .patch(let version, let title, let items):
            guard var next = view else { throw CommandRejection("a patch before the snapshot") }
            next.version = version
            if let title { next.title = title }
            if let items { try items.apply(to: &next.items) }
            view = next
        case .ack, .error:
            break
        }
    }
}
