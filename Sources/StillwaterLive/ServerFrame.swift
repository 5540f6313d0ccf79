import Foundation

/// The `code` of an error frame: what went wrong, for a client to act on without reading the message.
public enum LiveErrorCode: String, Sendable, CaseIterable {
    /// The frame is not a JSON object of a known shape (a missing or mistyped member, an unknown key, a
    /// malformed `cid`). Nothing changed; the connection stays open.
    case malformed
    /// The frame is longer than the hub's limit. Nothing changed; the connection stays open.
    case tooLarge = "too_large"
    /// A binary frame: the protocol is JSON text only. Nothing changed; the connection stays open.
    case binary
    /// The frame's `type` is not one the protocol knows. Nothing changed; the connection stays open.
    case unknownType = "unknown_type"
    /// A command frame whose `command` member does not decode as one of the service's commands.
    case badCommand = "bad_command"
    /// The first frame was not a hello, or a second hello came; the connection closes (4400).
    case helloExpected = "hello_expected"
    /// The hello named a protocol version the hub does not speak; the connection closes (4400).
    case unsupportedProtocol = "unsupported_protocol"
    /// The service refused the client's credentials; the connection closes (4401).
    case unauthorized
    /// No hello came in time; the connection closes (4408).
    case helloTimeout = "hello_timeout"
    /// The client already has as many commands unanswered as the hub allows; this one was not taken.
    /// Wait for an answer, then send it again.
    case windowFull = "window_full"
    /// The service refused the command; nothing changed.
    case rejected
    /// The hub cannot send the view this client needs: it does not encode as JSON (a NaN or an infinity
    /// in it, which JSON has no number for, or an `Encodable` conformance that throws). The message says
    /// where; the connection closes (1011). Reconnect after a delay: a later version whose view encodes
    /// is sent as usual.
    case viewUnavailable = "view_unavailable"
    /// The command was not recorded because the log could not take it now; the error carries
    /// `"retry":true` and the command may be sent again (with the same `cid`).
    case unavailable
    /// The command's number (`seq`) is not its client's next one: a command before it was not recorded
    /// (it was unavailable, say). The error carries `"retry":true` and `expected`, the next number:
    /// send the commands from that number on again, in order.
    case outOfOrder = "out_of_order"
    /// The log no longer remembers the client id (unseen for longer than the hub keeps clients), so it
    /// cannot tell whether the command was applied; it was not applied now. Start again without the id:
    /// the next welcome gives a new one. The command is not sent again.
    case clientExpired = "client_expired"
    /// The client's credentials expired (the time the service gave when it admitted them) and no
    /// `reauth` renewed them in time; the connection closes (4419). Connect again with new credentials.
    case tokenExpired = "token_expired"
    /// The server ended the session for a reason of its own (access withdrawn, a member removed); the
    /// message says why, and the connection closes (4403).
    case disconnected
}

/// The close codes a hub ends a connection with (WebSocket close codes; 4000–4999 is the range private
/// to an application).
public enum LiveCloseCode: Int, Sendable, CaseIterable {
    /// The hub is shutting down; reconnect later and resume.
    case goingAway = 1001
    /// A protocol error: the first frame was not a hello, a second hello came, or the protocol version is
    /// not spoken. Reconnecting with the same frames fails the same way.
    case protocolError = 4400
    /// The service refused the credentials. Do not reconnect with the same ones.
    case unauthorized = 4401
    /// No hello came within the hub's time limit.
    case helloTimeout = 4408
    /// The client read its frames too slowly: more were waiting for it than the hub keeps. Reconnect
    /// and resume; nothing it sent was lost (unanswered commands may be sent again with their `cid`).
    case tooSlow = 4429
    /// The server could not go on with the connection: the view the client needs cannot be encoded (an
    /// error frame `view_unavailable` before the close says where). The hub and its other connections
    /// keep running; reconnect after a delay and resume.
    case serverError = 1011
    /// The server ended the session (``LiveHub/disconnect(where:reason:)``): access was withdrawn, or the
    /// client's place changed. The error frame `disconnected` before the close says why. Reconnect only
    /// when the user asks to: the same credentials may be refused now.
    case disconnected = 4403
    /// The client's credentials expired (error `token_expired`). Reconnect with new credentials; a client
    /// that sends a `reauth` frame with new ones before the expiry keeps its connection.
    case expired = 4419
}

/// Encodes the frames a hub sends.
enum ServerFrame {
    static func welcome(stream: String, window: Int, client: LiveClientID, you: String? = nil, expires: Date? = nil) -> String {
        var json = LiveJSONWriter(capacity: 128 + (you?.utf8.count ?? 0))
        json.raw(#"{"type":"welcome","protocol":"#)
        json.int(liveProtocolVersion)
        json.raw(#","stream":"#)
        json.string(stream)
        json.raw(#","window":"#)
        json.int(window)
        json.raw(#","client":"#)
        json.string(client.text)
        if let you {
            json.key("you")
            json.raw(you)
        }
        writeExpiry(expires, to: &json)
        json.raw("}")
        return json.text
    }

    static func pong(ref: Int?) -> String {
        var json = LiveJSONWriter()
        json.raw(#"{"type":"pong""#)
        writeReference(ref: ref, cid: nil, seq: nil, to: &json)
        json.raw("}")
        return json.text
    }

    /// A presence frame with the whole list: each entry's client id and its JSON text.
    static func presence(state: [(client: String, json: String)]) -> String {
        var json = LiveJSONWriter(capacity: 32 + state.reduce(0) { $0 + $1.client.utf8.count + $1.json.utf8.count + 4 })
        json.raw(#"{"type":"presence","state":"#)
        writeEntries(state, to: &json)
        json.raw("}")
        return json.text
    }

    /// A presence frame with what changed: entries that joined (or changed), and client ids that left.
    static func presence(joins: [(client: String, json: String)], leaves: [String]) -> String {
        var json = LiveJSONWriter()
        json.raw(#"{"type":"presence""#)
        if !joins.isEmpty {
            json.key("joins")
            writeEntries(joins, to: &json)
        }
        if !leaves.isEmpty {
            json.key("leaves")
            json.raw("[")
            for (index, client) in leaves.enumerated() {
                if index > 0 { json.raw(",") }
                json.string(client)
            }
            json.raw("]")
        }
        json.raw("}")
        return json.text
    }

    /// Writes `{"id":entry,…}`.
    private static func writeEntries(_ entries: [(client: String, json: String)], to json: inout LiveJSONWriter) {
        json.raw("{")
        for (index, entry) in entries.enumerated() {
            if index > 0 { json.raw(",") }
            json.string(entry.client)
            json.raw(":")
            json.raw(entry.json)
        }
        json.raw("}")
    }

    static func reauthed(ref: Int?, expires: Date?) -> String {
        var json = LiveJSONWriter()
        json.raw(#"{"type":"reauthed""#)
        writeReference(ref: ref, cid: nil, seq: nil, to: &json)
        writeExpiry(expires, to: &json)
        json.raw("}")
        return json.text
    }

    /// Writes `,"expires":…` (whole milliseconds since 1970, rounded down) when there is an expiry.
    private static func writeExpiry(_ expires: Date?, to json: inout LiveJSONWriter) {
        guard let expires else { return }
        json.key("expires")
        json.int(Int((expires.timeIntervalSince1970 * 1_000).rounded(.down)))
    }

    static func snapshot(stream: String, version: Int, viewJSON: String) -> String {
        var json = LiveJSONWriter(capacity: viewJSON.utf8.count + 64)
        json.raw(#"{"type":"snapshot","stream":"#)
        json.string(stream)
        json.raw(#","version":"#)
        json.int(version)
        json.raw(#","view":"#)
        json.raw(viewJSON)
        json.raw("}")
        return json.text
    }

    static func patch(from: Int, version: Int, changes: LiveViewPatch) -> String {
        var json = LiveJSONWriter()
        json.raw(#"{"type":"patch","from":"#)
        json.int(from)
        json.raw(#","version":"#)
        json.int(version)
        changes.writeMembers(to: &json, first: false)
        json.raw("}")
        return json.text
    }

    static func ack(ref: Int?, cid: String?, seq: Int? = nil, version: Int, duplicate: Bool) -> String {
        var json = LiveJSONWriter()
        json.raw(#"{"type":"ack""#)
        writeReference(ref: ref, cid: cid, seq: seq, to: &json)
        json.key("version")
        json.int(version)
        if duplicate { json.raw(#","duplicate":true"#) }
        json.raw("}")
        return json.text
    }

    static func error(
        _ code: LiveErrorCode, _ message: String, ref: Int?, cid: String? = nil, seq: Int? = nil, expected: Int? = nil
    ) -> String {
        var json = LiveJSONWriter()
        json.raw(#"{"type":"error","code":"#)
        json.string(code.rawValue)
        json.key("message")
        json.string(message)
        writeReference(ref: ref, cid: cid, seq: seq, to: &json)
        if let expected {
            json.key("expected")
            json.int(expected)
        }
        if code == .unavailable || code == .windowFull || code == .outOfOrder { json.raw(#","retry":true"#) }
        json.raw("}")
        return json.text
    }

    /// Writes `,"ref":…`, `,"cid":…` and `,"seq":…`, each when present.
    private static func writeReference(ref: Int?, cid: String?, seq: Int?, to json: inout LiveJSONWriter) {
        if let ref {
            json.key("ref")
            json.int(ref)
        }
        if let cid {
            json.key("cid")
            json.string(cid)
        }
        if let seq {
            json.key("seq")
            json.int(seq)
        }
    }
}
