import Foundation
import Stillwater
@testable import StillwaterLive
import StillwaterTesting
import Testing

/// A meter whose reading may be set to any `Double`, NaN and the infinities included (the command is
/// text, so the log never holds a NaN: only the state and the view do), and a note whose encoder may be
/// made to throw.
struct Meter: Codable, Sendable {
    var label = "meter"
    var reading = 0.0
    var note = Note()
}

/// A member whose `Encodable` conformance throws while `broken`, with a message that must never reach a
/// client (it names a server path).
struct Note: Codable, Equatable, Sendable {
    struct Refusal: Error, CustomStringConvertible {
        var description: String { "cannot read /srv/secret/notes.db" }
    }

    var text = ""
    var broken = false

    init(text: String = "", broken: Bool = false) {
        self.text = text
        self.broken = broken
    }

    init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
    }

    func encode(to encoder: any Encoder) throws {
        if broken { throw Refusal() }
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

enum MeterCommand: Codable, Equatable, Sendable {
    /// Sets the reading to `Double(text)`: "nan", "inf" and "-inf" give the values JSON cannot hold.
    case read(String)
    case label(String)
    case note(String, broken: Bool)
}

struct MeterAction: Action, Codable, Equatable, Sendable {
    var command: MeterCommand

    func reduce(_ meter: inout Meter) {
        switch command {
        case .read(let text): meter.reading = Double(text) ?? 0
        case .label(let label): meter.label = label
        case .note(let text, let broken): meter.note = Note(text: text, broken: broken)
        }
    }
}

struct MeterView: LiveView {
    var label: String
    var reading: Double
    var note: Note

    static let liveFields: [LiveField<MeterView>] = [.value("label", \.label), .value("reading", \.reading), .value("note", \.note)]
}

struct MeterService: LiveService {
    func view(of state: Meter) -> MeterView { MeterView(label: state.label, reading: state.reading, note: state.note) }
    func decide(_ command: MeterCommand, state: Meter, identity: String) -> LiveDecision<MeterAction> {
        .accept(MeterAction(command: command))
    }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("reader") }
}

typealias MeterHub = LiveHub<MeterService>

extension MeterHub {
    static func make(initial: Meter = Meter()) async throws -> MeterHub {
        try await LiveHub.open(MeterService(), log: TestLog<LiveLogState<Meter>, LiveEntry<MeterAction>>(), initial: initial)
    }

    /// A connection past its hello, its welcome and first view taken.
    func joined(resume: (stream: String, version: Int)? = nil) async -> (LiveConnection<MeterService>, [String]) {
        let connection = connect()
        if let resume {
            connection.receive(#"{"type":"hello","protocol":1,"resume":{"stream":"\#(resume.stream)","version":\#(resume.version)}}"#)
        } else {
            connection.receive(#"{"type":"hello","protocol":1}"#)
        }
        guard let frames = await connection.nextBatch()?.texts else { return (connection, []) }
        return (connection, frames)
    }
}

/// Every frame a connection writes until its close, and the close (nil when it did not close).
func framesUntilClose<Service>(_ connection: LiveConnection<Service>) async -> ([String], LiveWrite?) {
    var frames: [String] = []
    while let write = await connection.nextBatch() {
        switch write {
        case .frames(let batch): frames += batch.map(\.text)
        case .close: return (frames, write)
        }
    }
    return (frames, nil)
}

@Suite("A view that cannot be encoded", .timeLimit(.minutes(5)))
struct LiveValueFailureTests {
    @Test("a NaN in a view closes the connections that need it with 1011 after a view_unavailable error, and the hub serves on",
          arguments: ["nan", "inf", "-inf"])
    func nonFiniteReading(text: String) async throws {
        let hub = try await MeterHub.make()
        let (first, _) = await hub.joined()
        let (second, _) = await hub.joined()
        // A command whose answer is still waiting when the view fails: it is written before the error.
        first.receive(#"{"type":"command","ref":1,"command":{"read":{"_0":"\#(text)"}}}"#)
        await hub.settle()
        hub.tick()
        for (connection, ackFirst) in [(first, true), (second, false)] {
            let (frames, close) = await framesUntilClose(connection)
            #expect(frames.map { object($0)["type"] as? String } == (ackFirst ? ["ack", "error"] : ["error"]))
            let error = object(try #require(frames.last))
            #expect(error["code"] as? String == "view_unavailable")
            let message = try #require(error["message"] as? String)
            #expect(message.contains("version 1") && message.contains("at reading"))
            #expect(message.contains(text == "nan" ? "NaN" : "infinity"))
            #expect(close == .close(.serverError, reason: "view_unavailable"))
            #expect(await connection.nextBatch() == nil)
            #expect(connection.phase == .closed)
        }
        // Commands are still recorded; a new client is refused the NaN view the same way, and once a
        // later view encodes, new and resuming clients are served, and patched after.
        #expect(await hub.perform(.label("kitchen"), as: "server") == .applied(version: 2))
        let (refused, refusedFrames) = await hub.joined()
        #expect(refusedFrames.map { object($0)["code"] as? String } == ["view_unavailable"])
        #expect(await refused.nextBatch() == .close(.serverError, reason: "view_unavailable"))
        #expect(await hub.perform(.read("21.5"), as: "server") == .applied(version: 3))
        let (fresh, freshFrames) = await hub.joined()
        #expect(freshFrames.map { object($0)["type"] as? String } == ["welcome", "snapshot"])
        let (resumed, resumedFrames) = await hub.joined(resume: (hub.stream, 0))
        #expect(resumedFrames.map { object($0)["type"] as? String } == ["welcome", "patch"])
        #expect((object(resumedFrames[1])["set"] as? [String: Any])?["reading"] as? Double == 21.5)
        _ = await hub.perform(.label("hall"), as: "server")
        hub.tick()
        for connection in [fresh, resumed] {
            guard let frames = await connection.nextBatch()?.texts else {
                Issue.record("no patch after the view encoded again")
                continue
            }
            #expect(frames.map { object($0)["type"] as? String } == ["patch"])
        }
        await hub.close()
    }

    @Test("a client whose next patch skips the NaN version keeps being patched; another hub is untouched")
    func othersServed() async throws {
        let hub = try await MeterHub.make()
        let other = try await MeterHub.make()
        let (watcher, _) = await other.joined()
        let (late, _) = await hub.joined()
        // The NaN comes and goes between two ticks: the client never needs that view.
        _ = await hub.perform(.read("nan"), as: "server")
        _ = await hub.perform(.read("3"), as: "server")
        _ = await other.perform(.read("nan"), as: "server")
        _ = await other.perform(.read("4"), as: "server")
        hub.tick()
        other.tick()
        for (connection, reading) in [(late, 3.0), (watcher, 4.0)] {
            guard let frames = await connection.nextBatch()?.texts else {
                Issue.record("no patch")
                continue
            }
            #expect(object(frames[0])["type"] as? String == "patch")
            #expect((object(frames[0])["set"] as? [String: Any])?["reading"] as? Double == reading)
            #expect(connection.phase == .live)
        }
        await hub.close()
        await other.close()
    }

    @Test("an encoder that throws closes with 1011, and the client hears where, not the encoder's own words")
    func throwingEncoder() async throws {
        let hub = try await MeterHub.make()
        let (connection, _) = await hub.joined()
        _ = await hub.perform(.note("draft", broken: true), as: "server")
        hub.tick()
        let (frames, close) = await framesUntilClose(connection)
        let last = try #require(frames.last)
        let message = try #require(object(last)["message"] as? String)
        #expect(object(frames[0])["code"] as? String == "view_unavailable")
        #expect(message.contains("version 1"))
        #expect(!message.contains("/srv") && !message.contains("Refusal") && !message.contains("Swift"))
        #expect(close == .close(.serverError, reason: "view_unavailable"))
        // The snapshot of that view fails too; a later one that encodes is served.
        let (refused, refusedFrames) = await hub.joined()
        #expect(refusedFrames.map { object($0)["code"] as? String } == ["view_unavailable"])
        #expect(await refused.nextBatch() == .close(.serverError, reason: "view_unavailable"))
        _ = await hub.perform(.note("final", broken: false), as: "server")
        let (_, servedFrames) = await hub.joined()
        #expect(servedFrames.map { object($0)["type"] as? String } == ["welcome", "snapshot"])
        await hub.close()
    }

    @Test("a view that cannot be encoded when the hub opens is a LiveHubError saying where, and no trap")
    func atOpen() async throws {
        let view = MeterView(label: "m", reading: .nan, note: Note())
        #expect(throws: LiveHubError.self) { try view.validateLiveFields() }
        do {
            try view.validateLiveFields()
        } catch {
            #expect(error.message.contains("at reading: NaN is not a JSON number"))
        }
        // A state whose view does not encode still opens (a stored NaN must not keep the server down); the
        // connections are refused as for any view that stopped encoding.
        let hub = try await MeterHub.make(initial: Meter(reading: .infinity))
        let (connection, frames) = await hub.joined()
        #expect(frames.map { object($0)["code"] as? String } == ["view_unavailable"])
        #expect(await connection.nextBatch() == .close(.serverError, reason: "view_unavailable"))
        await hub.close()
    }

    @Test("a view that is not a JSON object is a LiveHubError at open, never a trap")
    func notKeyed() async throws {
        struct Listed: LiveView {
            var values: [Int]
            static let liveFields: [LiveField<Listed>] = [.list("values", \.values)]
            init(values: [Int]) { self.values = values }
            init(from decoder: any Decoder) throws { values = try decoder.singleValueContainer().decode([Int].self) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(values)
            }
        }
        struct ListedService: LiveService {
            func view(of state: Meter) -> Listed { Listed(values: [Int(state.reading)]) }
            func decide(_ command: MeterCommand, state: Meter, identity: String) -> LiveDecision<MeterAction> {
                .accept(MeterAction(command: command))
            }
            func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("reader") }
        }
        #expect(throws: LiveHubError("Listed must encode as a JSON object (a keyed container) to be a LiveView")) {
            try Listed(values: [1]).validateLiveFields()
        }
        await #expect(throws: LiveHubError("Listed must encode as a JSON object (a keyed container) to be a LiveView")) {
            _ = try await LiveHub.open(ListedService(), log: TestLog<LiveLogState<Meter>, LiveEntry<MeterAction>>(), initial: Meter())
        }
    }

    @Test("a frame that could not be made is made once per pair of versions, not once per client")
    func failureShared() async throws {
        let hub = try await MeterHub.make()
        var connections: [LiveConnection<MeterService>] = []
        for _ in 0..<3 { connections.append(await hub.joined().0) }
        _ = await hub.perform(.read("nan"), as: "server")
        let head = hub.shared.head
        #expect(head.version == 1)
        let first = hub.shared.syncFrame(for: .everyone, from: 0, to: head, stream: hub.stream)
        let second = hub.shared.syncFrame(for: .everyone, from: 0, to: head, stream: hub.stream)
        guard case .unavailable(let message) = first.text else {
            Issue.record("the NaN view encoded")
            return
        }
        #expect(second.text == first.text)
        #expect(message == "the view at version 1 cannot be sent: at reading: NaN is not a JSON number")
        hub.tick()
        for connection in connections {
            #expect(await framesUntilClose(connection).1 == .close(.serverError, reason: "view_unavailable"))
        }
        await hub.close()
    }
}
