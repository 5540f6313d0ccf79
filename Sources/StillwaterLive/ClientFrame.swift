import Foundation

/// The version of the live protocol this library speaks; a hello frame must name it.
public let liveProtocolVersion = 1

/// A frame a client sent, decoded: its hello, or a command.
public enum LiveClientFrame<Command: Sendable>: Sendable {
    /// The first frame of every connection.
    case hello(LiveHello)
    /// A command for the service.
    case command(LiveCommandRequest<Command>)
    /// New credentials for a live client, before its current ones expire.
    case reauth(LiveReauth)
    /// A heartbeat: the server answers `pong` at once, echoing `ref`.
    case ping(ref: Int?)

}

extension LiveClientFrame where Command: Decodable {
    /// Decodes and checks a client's text frame (the protocol article lists the shapes).
    ///
    /// Nothing a client sends makes this trap: every problem is a thrown ``LiveFrameError`` with a code,
    /// a message and the frame's `ref` whenever it could be read.
    ///
    /// - Parameters:
    ///   - text: The frame's text.
    ///   - maxBytes: The longest frame decoded, in UTF-8 bytes; a longer one is refused (`too_large`).
    /// - Throws: ``LiveFrameError``.
    public static func decode(_ text: String, maxBytes: Int) throws(LiveFrameError) -> LiveClientFrame {
        let data = Data(text.utf8)
        guard data.count <= maxBytes else {
            throw LiveFrameError(.tooLarge, "a frame of \(data.count) bytes is over the limit of \(maxBytes)",
                                 ref: Self.probe(data)?.ref)
        }
        guard let probe = Self.probe(data) else {
            throw LiveFrameError(.malformed, "not a JSON object")
        }
        let ref = probe.ref
        if let key = probe.unknownKey {
            throw LiveFrameError(.malformed, "unknown key \"\(key.prefix(32))\" in a \(probe.type?.prefix(32) ?? "?") frame", ref: ref)
        }
        guard probe.refIsValid else {
            throw LiveFrameError(.malformed, "\"ref\" must be an integer")
        }
        switch probe.type {
        case "hello":
            let wire: HelloWire
            do {
                wire = try JSONDecoder().decode(HelloWire.self, from: data)
            } catch {
                throw LiveFrameError(.malformed, "a hello frame: \(Self.describe(error))", ref: ref)
            }
            var client: LiveClientID?
            if let text = wire.client {
                guard let id = LiveClientID(text) else {
                    throw LiveFrameError(.malformed, "\"client\" must be an id a welcome gave", ref: ref)
                }
                client = id
            }
            return .hello(LiveHello(protocolVersion: wire.protocol, token: wire.token, params: wire.params ?? [:],
                                    resume: wire.resume.map { LiveResume(stream: $0.stream, version: $0.version) }, ref: ref,
                                    client: client))
        case "command":
            let wire: CommandWire
            do {
                wire = try JSONDecoder().decode(CommandWire.self, from: data)
            } catch {
                throw LiveFrameError(.malformed, "a command frame: \(Self.describe(error))", ref: ref)
            }
            if let cid = wire.cid, !LiveCommandRequest<Command>.isValidCID(cid) {
                throw LiveFrameError(.malformed, "\"cid\" must be 1 to 64 ASCII letters, digits, - or _", ref: ref)
            }
            if let seq = wire.seq, !(1...LiveCommandRequest<Command>.maxSeq).contains(seq) {
                throw LiveFrameError(.malformed, "\"seq\" must be an integer from 1 to 2^53 - 1", ref: ref)
            }
            guard probe.hasCommand else { throw LiveFrameError(.malformed, "a command frame needs \"command\"", ref: ref) }
            let command: Command
            do {
                command = try JSONDecoder().decode(CommandBody<Command>.self, from: data).command
            } catch {
                throw LiveFrameError(.badCommand, "the command does not decode: \(Self.describe(error))", ref: ref)
            }
            return .command(LiveCommandRequest(command: command, ref: ref, cid: wire.cid, seq: wire.seq))
        case "reauth":
            let wire: ReauthWire
            do {
                wire = try JSONDecoder().decode(ReauthWire.self, from: data)
            } catch {
                throw LiveFrameError(.malformed, "a reauth frame: \(Self.describe(error))", ref: ref)
            }
            return .reauth(LiveReauth(token: wire.token, ref: ref))
        case "ping":
            return .ping(ref: ref)
        case nil:
            throw LiveFrameError(.malformed, "a frame needs a string \"type\"", ref: ref)
        case let other?:
            throw LiveFrameError(.unknownType, "unknown frame type \"\(other.prefix(32))\"", ref: ref)
        }
    }

    /// The keys of the frame's object, its type and its ref; nil when `data` is not a JSON object.
    private static func probe(_ data: Data) -> Probe? {
        try? JSONDecoder().decode(Probe.self, from: data)
    }

    /// A decoding error in one short line of the protocol's words: where (`at command.add.text`) and
    /// what was expected (`expected a string`). It names no Swift type and quotes none of the decoder's
    /// or the app's own text: the message goes to the client.
    private static func describe(_ error: any Error) -> String {
        LiveJSON.describe(decoding: error)
    }

    /// The envelope members every frame type may have: what ``probe(_:)`` reads first.
    private struct Probe: Decodable {
        static var known: Set<String> { ["type", "ref", "cid", "seq", "command", "protocol", "token", "params", "resume", "client"] }
        var type: String?
        var ref: Int?
        var refIsValid = true
        var hasCommand = false
        var unknownKey: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            type = try? container.decodeIfPresent(String.self, forKey: AnyKey("type"))
            if container.contains(AnyKey("ref")), (try? container.decodeNil(forKey: AnyKey("ref"))) != true {
                ref = try? container.decode(Int.self, forKey: AnyKey("ref"))
                refIsValid = ref != nil
            }
            hasCommand = container.contains(AnyKey("command"))
            let allowed: Set<String> = switch type {
            case "hello": ["type", "ref", "protocol", "token", "params", "resume", "client"]
            case "command": ["type", "ref", "cid", "seq", "command"]
            case "reauth": ["type", "ref", "token"]
            case "ping": ["type", "ref"]
            default: Self.known
            }
            unknownKey = container.allKeys.map(\.stringValue).sorted().first { !allowed.contains($0) }
        }
    }

    private struct HelloWire: Decodable {
        struct Resume: Decodable {
            var stream: String
            var version: Int
        }

        var `protocol`: Int
        var token: String?
        var params: [String: String]?
        var resume: Resume?
        var client: String?
    }

    private struct ReauthWire: Decodable {
        var token: String
    }

    private struct CommandWire: Decodable {
        var cid: String?
        var seq: Int?
    }

}

/// The `command` member of a command frame.
private struct CommandBody<Command: Decodable>: Decodable {
    var command: Command
}

/// A coding key with any name.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A client's hello frame: the protocol version it speaks, its credentials, and where it resumes from.
public struct LiveHello: Sendable, Equatable {
    /// The protocol version the client speaks (``liveProtocolVersion``).
    public var protocolVersion: Int
    /// The client's secret token, if it sends one in the frame.
    public var token: String?
    /// String parameters the client chose, handed to ``LiveService/authenticate(_:)``.
    public var params: [String: String]
    /// The stream and version of the view the client has, when it reconnects.
    public var resume: LiveResume?
    /// The frame's reference number, if it gave one.
    public var ref: Int?
    /// The id an earlier welcome gave the client, under which it numbers its commands; nil for a client
    /// that has none yet (its welcome gives it one).
    public var client: LiveClientID?

    /// Creates a hello.
    public init(protocolVersion: Int = liveProtocolVersion, token: String? = nil, params: [String: String] = [:],
                resume: LiveResume? = nil, ref: Int? = nil) {
        self.init(protocolVersion: protocolVersion, token: token, params: params, resume: resume, ref: ref, client: nil)
    }

    /// Creates a hello from a client that has an id.
    ///
    /// - Parameters:
    ///   - protocolVersion: The protocol version the client speaks.
    ///   - token: The client's secret, if it sends one in the frame.
    ///   - params: String parameters for the service's check.
    ///   - resume: Where the client resumes from.
    ///   - ref: The frame's reference number.
    ///   - client: The id an earlier welcome gave the client.
    public init(protocolVersion: Int = liveProtocolVersion, token: String? = nil, params: [String: String] = [:],
                resume: LiveResume? = nil, ref: Int? = nil, client: LiveClientID?) {
        self.protocolVersion = protocolVersion
        self.token = token
        self.params = params
        self.resume = resume
        self.ref = ref
        self.client = client
    }
}

/// A live client's `reauth` frame: new credentials, sent before the ones it connected with expire.
public struct LiveReauth: Sendable, Equatable {
    /// The new token, handed to ``LiveService/authenticate(_:)`` with the hello's parameters.
    public var token: String
    /// The frame's reference number, echoed in the `reauthed` frame or the error that answers it.
    public var ref: Int?

    /// Creates a reauth frame's content.
    public init(token: String, ref: Int? = nil) {
        self.token = token
        self.ref = ref
    }
}

/// Where a reconnecting client resumes: the stream its view is of and the version it has.
public struct LiveResume: Sendable, Equatable {
    /// The stream identity of the client's last snapshot.
    public var stream: String
    /// The version of the view the client has.
    public var version: Int

    /// Creates a resume point.
    public init(stream: String, version: Int) {
        self.stream = stream
        self.version = version
    }
}

/// A client's command, with its optional reference number and client id.
public struct LiveCommandRequest<Command: Sendable>: Sendable {
    /// The command.
    public var command: Command
    /// The client's number for the frame, echoed in the answer.
    public var ref: Int?
    /// The client's id for the command: 1 to 64 ASCII letters, digits, `-` and `_`. A command whose id
    /// is among the log's latest ``RecentCommandIDs/capacity`` recorded ones is answered as a duplicate.
    public var cid: String?
    /// The client's number for the command (1, 2, 3, … under its ``client`` id): a number the log
    /// recorded for the client before is answered as a duplicate however late it comes.
    public var seq: Int?
    /// The client that numbered the command: set by the session from the connection's hello or welcome.
    public var client: LiveClientID?

    /// The highest command number: 2^53 − 1, the largest integer every JSON reader keeps exactly.
    public static var maxSeq: Int { (1 << 53) - 1 }

    /// Creates a request.
    public init(command: Command, ref: Int? = nil, cid: String? = nil) {
        self.init(command: command, ref: ref, cid: cid, seq: nil, client: nil)
    }

    /// Creates a request that may be numbered.
    ///
    /// - Parameters:
    ///   - command: The command.
    ///   - ref: The client's number for the frame.
    ///   - cid: The client's id for the command.
    ///   - seq: The client's number for the command.
    ///   - client: The client that numbered it.
    public init(command: Command, ref: Int? = nil, cid: String? = nil, seq: Int?, client: LiveClientID? = nil) {
        self.command = command
        self.ref = ref
        self.cid = cid
        self.seq = seq
        self.client = client
    }

    /// Whether `cid` is a well-formed client id: 1 to 64 ASCII letters, digits, `-` and `_`.
    public static func isValidCID(_ cid: String) -> Bool {
        !cid.isEmpty && cid.utf8.count <= 64 && cid.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2D || byte == 0x5F
        }
    }
}

/// Why a client frame was refused: the error frame's code, message and `ref`.
public struct LiveFrameError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error frame's `code`.
    public var code: LiveErrorCode
    /// What was wrong, in words.
    public var message: String
    /// The refused frame's `ref`, when it could be read.
    public var ref: Int?

    /// Creates an error.
    public init(_ code: LiveErrorCode, _ message: String, ref: Int? = nil) {
        self.code = code
        self.message = message
        self.ref = ref
    }

    /// The code and the message.
    public var description: String { "\(code.rawValue): \(message)" }
}
