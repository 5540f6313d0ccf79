import Foundation
import LiveServerCore
import Stillwater
import StillwaterLive
import Synchronization

// The live protocol (StillwaterLive's Protocol article) as the load programs speak it: the frames they
// send, the frames they read, and a board replica kept from snapshots and patches.

/// A frame the server sends, as a load client reads it.
public enum LiveFrame: Sendable {
    /// The client is admitted: the log's identity, how many commands may be unanswered at once, and the
    /// client id the server gave the connection.
    case welcome(stream: String, window: Int, client: String?)
    /// The whole view at `version`.
    case snapshot(stream: String, version: Int, view: LiveBoardView)
    /// What changed from `from` to `version`: the new title when it changed, the items' list patch when they did.
    case patch(from: Int, version: Int, title: String?, items: ListPatch<BoardItem>?)
    /// A command is durable and applied (or was, before, when `duplicate`), visible from `version` on.
    case ack(ref: Int?, cid: String?, version: Int, duplicate: Bool)
    /// A frame or command refused; `retry` when it may be sent again unchanged.
    case error(code: String, message: String, ref: Int?, cid: String?, retry: Bool)
    /// Who is connected, by client id: the whole list (`state`), or what changed since the last frame.
    case presence(state: Set<String>?, joins: Set<String>, leaves: [String])
    /// A frame a load client reads and ignores: a `pong`, a `reauthed`.
    case ignored(type: String)

    /// Decodes one text frame; throws `LoadFrameError` for a frame of another shape.
    public static func decode(_ text: String) throws -> LiveFrame {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(text.utf8))
        } catch {
            throw LoadFrameError("undecodable frame (\(error)): \(text.prefix(120))")
        }
        func need<Value>(_ value: Value?, _ name: String) throws -> Value {
            guard let value else { throw LoadFrameError("a \(wire.type) frame without \"\(name)\": \(text.prefix(120))") }
            return value
        }
        switch wire.type {
        case "welcome":
            return .welcome(stream: try need(wire.stream, "stream"), window: try need(wire.window, "window"), client: wire.client)
        case "snapshot":
            return .snapshot(stream: try need(wire.stream, "stream"), version: try need(wire.version, "version"),
                             view: try need(wire.view, "view"))
        case "patch":
            return .patch(from: try need(wire.from, "from"), version: try need(wire.version, "version"),
                          title: wire.set?.title, items: wire.lists?.items)
        case "ack":
            return .ack(ref: wire.ref, cid: wire.cid, version: try need(wire.version, "version"), duplicate: wire.duplicate ?? false)
        case "error":
            return .error(code: try need(wire.code, "code"), message: wire.message ?? "", ref: wire.ref, cid: wire.cid,
                          retry: wire.retry ?? false)
        case "presence":
            return .presence(state: wire.state.map { Set($0.keys) }, joins: Set((wire.joins ?? [:]).keys), leaves: wire.leaves ?? [])
        case "pong", "reauthed": return .ignored(type: wire.type)
        default: throw LoadFrameError("a frame of unknown type \"\(wire.type.prefix(32))\"")
        }
    }

    /// Every member a server frame may have (the article's tables).
    private struct Wire: Decodable {
        struct Set: Decodable { var title: String? }
        struct Lists: Decodable { var items: ListPatch<BoardItem>? }
        /// A presence entry: the app's JSON, which the load programs do not read.
        struct Entry: Decodable { init(from decoder: any Decoder) throws {} }
        var type: String
        var client: String?
        var state: [String: Entry]?
        var joins: [String: Entry]?
        var leaves: [String]?
        var stream: String?
        var window: Int?
        var version: Int?
        var from: Int?
        var view: LiveBoardView?
        var set: Set?
        var lists: Lists?
        var ref: Int?
        var cid: String?
        var duplicate: Bool?
        var code: String?
        var message: String?
        var retry: Bool?
    }
}

/// A server frame a load client cannot use, in words.
public struct LoadFrameError: Error, CustomStringConvertible, Sendable {
    /// What was wrong with the frame, with its beginning.
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Decodes server frames once for all clients: the server sends the same snapshot or patch text to every
/// client of a board, so the load programs keep the frames decoded lately by their text (acks and errors,
/// which differ per client, are decoded each time). Keeps at most `capacity` frames.
public final class SharedFrameDecoder: Sendable {
    private struct Cache {
        var frames: [String: LiveFrame] = [:]
        var order: [String] = []
        var next = 0
    }

    private let cache = Mutex(Cache())
    private let capacity: Int

    /// A decoder remembering the last `capacity` snapshot and patch frames.
    public init(capacity: Int = 256) {
        precondition(capacity > 0, "SharedFrameDecoder(capacity:): capacity must be at least 1; got \(capacity)")
        self.capacity = capacity
    }

    /// The frame `text` holds, decoded by this call or an earlier one with the same text.
    public func decode(_ text: String) throws -> LiveFrame {
        guard text.hasPrefix(#"{"type":"patch""#) || text.hasPrefix(#"{"type":"snapshot""#) else {
            return try LiveFrame.decode(text)
        }
        if let frame = cache.withLock({ $0.frames[text] }) { return frame }
        let frame = try LiveFrame.decode(text)
        cache.withLock { cache in
            if cache.order.count < capacity {
                cache.order.append(text)
            } else {
                cache.frames[cache.order[cache.next]] = nil
                cache.order[cache.next] = text
                cache.next = (cache.next + 1) % capacity
            }
            cache.frames[text] = frame
        }
        return frame
    }
}

/// A client's copy of one board's view: replaced by a snapshot, moved on by a patch that follows on.
public struct LiveBoardReplica: Sendable {
    /// The log the copy comes from (`nil` before the first snapshot).
    public private(set) var stream: String?
    /// The copy's version (`-1` before the first snapshot).
    public private(set) var version = -1
    /// The copy (`nil` before the first snapshot).
    public private(set) var view: LiveBoardView?

    /// A replica with no view yet.
    public init() {}

    /// Applies a snapshot or a patch; other frames change nothing.
    ///
    /// - Returns: Whether the copy's version moved.
    /// - Throws: `LoadFrameError` for a patch that does not follow on from the copy's version, and the
    ///   library's `ListPatchError` for an items patch that does not fit the copy's list (the copy is
    ///   left as it was either way).
    @discardableResult
    public mutating func apply(_ frame: LiveFrame) throws -> Bool {
        switch frame {
        case .snapshot(let stream, let version, let view):
            let moved = version != self.version || stream != self.stream
            (self.stream, self.version, self.view) = (stream, version, view)
            return moved
        case .patch(let from, let version, let title, let items):
            guard var view, from == self.version else {
                throw LoadFrameError("a patch from \(from) for a copy at \(self.version)")
            }
            if let title { view.title = title }
            if let items { try items.apply(to: &view.items) }
            (self.version, self.view) = (version, view)
            return version != from
        case .welcome, .ack, .error, .presence, .ignored:
            return false
        }
    }
}

/// The frames a load client sends.
public enum LiveClientText {
    /// The hello: protocol 1, the token, the team as a param, and the stream and version to resume from.
    public static func hello(token: String, team: String, resume: (stream: String, version: Int)? = nil) -> String {
        struct Resume: Encodable { var stream: String; var version: Int }
        struct Hello: Encodable {
            var type = "hello"
            var `protocol` = liveProtocolVersion
            var token: String
            var params: [String: String]
            var resume: Resume?
        }
        let hello = Hello(token: token, params: ["team": team], resume: resume.map { Resume(stream: $0.stream, version: $0.version) })
        return encode(hello)
    }

    /// A command frame: the board command (`{"add":{"text":…}}`) with its `ref` and `cid`.
    public static func command(_ command: BoardCommand, ref: Int, cid: String?) -> String {
        struct Command: Encodable {
            var type = "command"
            var ref: Int
            var cid: String?
            var command: BoardCommand
        }
        return encode(Command(ref: ref, cid: cid, command: command))
    }

    private static func encode(_ value: some Encodable) -> String {
        // The frames hold strings, numbers and the command: encoding them cannot fail.
        String(decoding: try! JSONEncoder().encode(value), as: UTF8.self)
    }
}
