import Foundation
import Stillwater
import StillwaterLive
import StillwaterTesting
import Synchronization
import Testing

/// A transport wired straight to a hub's connections, with no network: each `connect()` is a new
/// `LiveConnection`. It counts its connections and can drop the current one (as a network failure
/// would: no close code) or refuse to connect for a while.
final class InProcessTransport<Service: LiveService>: LiveClientTransport {
    private struct State {
        var connections: [LiveConnection<Service>] = []
        var drops: [@Sendable () -> Void] = []
        var offline = false
        /// Every frame a client sent, in order.
        var sent: [String] = []
        /// Every frame the hub wrote, in order.
        var received: [String] = []
    }

    let hub: LiveHub<Service>
    private let state = Mutex(State())

    init(hub: LiveHub<Service>) {
        self.hub = hub
    }

    var connectionCount: Int { state.withLock { $0.connections.count } }
    var sentFrames: [String] { state.withLock { $0.sent } }
    var receivedFrames: [String] { state.withLock { $0.received } }

    /// Whether `connect()` fails.
    func setOffline(_ offline: Bool) {
        state.withLock { $0.offline = offline }
    }

    /// Drops the current connection as a failed network would: the client sees it close without a code.
    func dropCurrent() {
        let drop = state.withLock { $0.drops.last }
        drop?()
    }

    func connect() async throws -> LiveClientChannel {
        if state.withLock({ $0.offline }) { throw TransportOffline() }
        let connection = hub.connect()
        let (incoming, sink) = AsyncStream.makeStream(of: LiveTransportEvent.self)
        let writer = Task { [weak self] in
            while let write = await connection.nextBatch() {
                switch write {
                case .frames(let frames):
                    self?.state.withLock { $0.received += frames.map(\.text) }
                    for frame in frames { sink.yield(.text(frame.text)) }
                case .close(let code, let reason):
                    sink.yield(.closed(code: code.rawValue, reason: reason))
                    connection.transportClosed()
                }
            }
            sink.finish()
        }
        let drop: @Sendable () -> Void = {
            connection.transportClosed()
            writer.cancel()
            sink.yield(.closed(code: nil, reason: "dropped by the test"))
            sink.finish()
        }
        state.withLock {
            $0.connections.append(connection)
            $0.drops.append(drop)
        }
        return LiveClientChannel(incoming: incoming, send: { [weak self] text in
            self?.state.withLock { $0.sent.append(text) }
            connection.receive(text)
        }, close: {
            writer.cancel()
            connection.transportClosed()
            sink.finish()
        })
    }
}

/// What ``InProcessTransport`` throws while it is offline.
struct TransportOffline: Error {}

typealias BoardClient = LiveClient<BoardView, BoardCommand>

/// Fast reconnects for the tests.
// The hello timeout is long: a test answers the hello itself, and under the thread sanitizer on a busy machine a
// few seconds can pass before it does (no test here is about the timeout).
let quickOptions = LiveClientOptions(backoffInitial: .milliseconds(5), backoffMax: .milliseconds(50), helloTimeout: .seconds(60))

/// Waits (up to 10 s) until `condition` holds; false when it never did.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<2000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A hub that patches its clients every patch interval, as a server runs it.
struct Served {
    let hub: BoardHub
    let ticker: Task<Void, Never>

    static func make() async throws -> Served {
        let hub = try await BoardHub.make()
        return Served(hub: hub, ticker: Task { await hub.run() })
    }

    func client(_ transport: InProcessTransport<BoardService>, token: String = "good") -> BoardClient {
        BoardClient(transport: transport, token: token, options: quickOptions)
    }
}

@Suite("LiveClient", .timeLimit(.minutes(5)))
struct LiveClientTests {
    @Test("the client's view equals the hub's after commands from another client")
    func mirrorsTheHub() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let hub = served.hub
        let watcher = served.client(InProcessTransport(hub: hub))
        let writer = served.client(InProcessTransport(hub: hub))
        #expect(await eventually { watcher.status.value == .live })
        _ = try await writer.send(.setTitle("Groceries"))
        for text in ["milk", "eggs", "bread", "tea"] { _ = try await writer.send(.add(text: text)) }
        _ = try await writer.send(.move(id: "i4", to: 0))
        _ = try await writer.send(.delete(id: "i2"))
        _ = try await writer.send(.toggle(id: "i1"))
        #expect(await eventually { watcher.view.value == hub.view })
        #expect(watcher.view.value?.items.map(\.text) == ["tea", "milk", "bread"])
        #expect(watcher.view.value?.title == "Groceries")
        await watcher.close()
        await writer.close()
        await hub.close()
    }

    @Test("a command's outcome: applied at a version, or rejected with the service's message")
    func outcomes() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let (hub, transport) = (served.hub, InProcessTransport(hub: served.hub))
        let client = served.client(transport, token: "good")
        let applied = try await client.send(.add(text: "milk"))
        #expect(applied == .applied(version: 1))
        let rejected = try await client.send(.delete(id: "i99"))
        #expect(rejected == .rejected("no item with id \"i99\""))
        // A numbered refusal is recorded (its number is used): it makes version 2 and changes nothing.
        #expect(hub.version == 2)
        #expect(await eventually { client.view.value?.items.map(\.text) == ["milk"] })
        await client.close()
        await hub.close()
    }

    @Test("random commands from several clients leave every client's view equal to the hub's", arguments: [1, 2])
    func converges(seed: UInt64) async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let hub = served.hub
        let clients = (0..<3).map { _ in served.client(InProcessTransport(hub: hub)) }
        var random = SeededRandom(seed: seed)
        for _ in 0..<40 {
            let command = randomCommand(for: hub.state.value, using: &random)
            let client = clients[Int.random(in: 0..<clients.count, using: &random)]
            _ = try await client.send(command)
        }
        for client in clients {
            #expect(await eventually { client.view.value == hub.view })
            await client.close()
        }
        await hub.close()
    }

    @Test("a command sent again with a cid the server recorded is answered as a duplicate, not applied again")
    func duplicateCID() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let (hub, transport) = (served.hub, InProcessTransport(hub: served.hub))
        let client = served.client(transport, token: "good")
        let first = try await client.send(.add(text: "milk"))
        #expect(first == .applied(version: 1))
        // The frame the client sent, sent once more on another connection (as a client would after a
        // reconnect that lost the ack): the hub answers it as a duplicate.
        let numbered = try #require(transport.sentFrames.first { $0.contains(#""type":"command""#) })
        let cid = try #require(object(numbered)["cid"] as? String)
        // Without its number: a client that sends only a cid (the number belongs to the client's id,
        // which this connection does not name).
        var body = object(numbered)
        body["seq"] = nil
        let frame = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        #expect(cid.count == 22)
        let other = hub.connect()
        other.receive(goodHello)
        _ = await other.nextBatch()
        other.receive(frame)
        let answers = await drainUntilAck(other)
        #expect(answers.contains { object($0)["duplicate"] as? Bool == true && object($0)["cid"] as? String == cid })
        #expect(hub.view.items.count == 1)
        other.transportClosed()
        await client.close()
        await hub.close()
    }

    @Test("a dropped transport reconnects and resumes from the client's version")
    func resumes() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let (hub, transport) = (served.hub, InProcessTransport(hub: served.hub))
        let client = served.client(transport, token: "good")
        _ = try await client.send(.add(text: "milk"))
        #expect(await eventually { client.view.value?.items.count == 1 })
        transport.dropCurrent()
        _ = await hub.perform(.add(text: "eggs"), as: "server")
        #expect(await eventually { transport.connectionCount == 2 && client.status.value == .live })
        #expect(await eventually { client.view.value == hub.view })
        let hellos = transport.sentFrames.filter { $0.contains(#""type":"hello""#) }
        #expect(hellos.count == 2)
        let resume = try #require(object(hellos[1])["resume"] as? [String: Any])
        #expect(resume["stream"] as? String == hub.stream)
        #expect(resume["version"] as? Int == 1)
        await client.close()
        await hub.close()
    }

    @Test("commands sent while disconnected are delivered once after the reconnect")
    func offlineQueue() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let (hub, transport) = (served.hub, InProcessTransport(hub: served.hub))
        let client = served.client(transport, token: "good")
        #expect(await eventually { client.status.value == .live })
        transport.setOffline(true)
        transport.dropCurrent()
        #expect(await eventually { if case .waiting = client.status.value { true } else { false } })
        async let first = client.send(.add(text: "milk"))
        async let second = client.send(.add(text: "eggs"))
        try await Task.sleep(for: .milliseconds(100))
        #expect(hub.version == 0, "nothing is delivered while offline")
        transport.setOffline(false)
        let outcomes = try await [first, second]
        #expect(outcomes.contains(.applied(version: 1)) && outcomes.contains(.applied(version: 2)))
        #expect(await eventually { client.view.value == hub.view })
        #expect(hub.view.items.map(\.text).sorted() == ["eggs", "milk"])
        await client.close()
        await hub.close()
    }

    @Test("a command in flight when the transport drops is answered once: applied or duplicate, never twice")
    func inFlightDrop() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let (hub, transport) = (served.hub, InProcessTransport(hub: served.hub))
        let client = served.client(transport, token: "good")
        #expect(await eventually { client.status.value == .live })
        async let outcome = client.send(.add(text: "milk"))
        #expect(await eventually { transport.sentFrames.contains { $0.contains(#""type":"command""#) } })
        transport.dropCurrent()
        let answer = try await outcome
        #expect(answer == .applied(version: 1) || answer == .duplicate(version: 1))
        #expect(await eventually { client.view.value == hub.view })
        #expect(hub.view.items.count == 1)
        await client.close()
        await hub.close()
    }

    @Test("a refused token stops the client with the server's message and fails its commands")
    func refusedToken() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let (hub, transport) = (served.hub, InProcessTransport(hub: served.hub))
        let client = served.client(transport, token: "bad")
        #expect(await eventually { client.status.value.isFinal })
        #expect(client.status.value == .refused("the token was refused"))
        await #expect(throws: LiveClientError.self) { try await client.send(.add(text: "milk")) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(transport.connectionCount == 1, "no reconnect after 4401")
        #expect(client.view.value == nil)
        await hub.close()
    }

    @Test("a closed client fails later sends and stops connecting")
    func closes() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let (hub, transport) = (served.hub, InProcessTransport(hub: served.hub))
        let client = served.client(transport, token: "good")
        #expect(await eventually { client.status.value == .live })
        await client.close()
        #expect(client.status.value == .closed)
        await #expect(throws: LiveClientError.closed) { try await client.send(.add(text: "milk")) }
        #expect(transport.connectionCount == 1)
        await hub.close()
    }

    @Test("backoff delays double from the first up to the longest, within the jitter")
    func backoff() {
        let options = LiveClientOptions(backoffInitial: .milliseconds(100), backoffMax: .seconds(2), jitter: 0.25)
        for attempt in 0..<12 {
            let base = min(Duration.seconds(2), .milliseconds(100) * (1 << attempt))
            #expect(options.backoffDelay(attempt: attempt, random: 0) == base * 0.75)
            #expect(options.backoffDelay(attempt: attempt, random: 0.5) == base)
            #expect(options.backoffDelay(attempt: attempt, random: 0.999) < base * 1.25)
        }
    }
}

/// Frames of `connection` until one is an ack or an error (at most a few writes).
func drainUntilAck(_ connection: LiveConnection<BoardService>) async -> [String] {
    var frames: [String] = []
    for _ in 0..<5 {
        guard let texts = await connection.nextBatch()?.texts else { break }
        frames += texts
        if texts.contains(where: { ["ack", "error"].contains(object($0)["type"] as? String) }) { break }
    }
    return frames
}

/// A transport whose server is the test: it writes the frames a server would, as Protocol.md shows them.
final class ScriptedTransport: LiveClientTransport {
    private struct Connection {
        var sink: AsyncStream<LiveTransportEvent>.Continuation
        var sent: [String] = []
    }

    /// The package's `Lock`, not a bare `Mutex`: a contended `Mutex` hands over inside the kernel, where
    /// the thread sanitizer cannot see it, and it reported this helper's own sections as racing (the
    /// engine article's "Locks and the thread sanitizer").
    private let state = Lock([Connection]())

    var connectionCount: Int { state.withLock { $0.count } }

    /// The frames the client sent on connection `index` (none when there is no such connection yet).
    func sent(on index: Int) -> [String] { state.withLock { $0.indices.contains(index) ? $0[index].sent : [] } }

    /// Writes `frames` (and then a close, when given) on connection `index`.
    func serve(_ index: Int, _ frames: [String], close: Int? = nil) {
        let sink = state.withLock { $0[index].sink }
        for frame in frames { sink.yield(.text(frame)) }
        if let close { sink.yield(.closed(code: close, reason: "")) }
    }

    func connect() async throws -> LiveClientChannel {
        let (incoming, sink) = AsyncStream.makeStream(of: LiveTransportEvent.self)
        let index = state.withLock { connections in
            connections.append(Connection(sink: sink))
            return connections.count - 1
        }
        return LiveClientChannel(incoming: incoming, send: { [weak self] text in
            self?.state.withLock { $0[index].sent.append(text) }
        }, close: { sink.finish() })
    }
}

@Suite("LiveClient against a scripted server", .timeLimit(.minutes(5)))
struct LiveClientScriptedTests {
    static let welcome = #"{"type":"welcome","protocol":1,"stream":"s-5f0c1e2d3c4b5a69","window":64}"#
    static let snapshot = #"{"type":"snapshot","stream":"s-5f0c1e2d3c4b5a69","version":41,"view":{"title":"Groceries","count":1,"items":[{"id":"i1","text":"Milk","done":false}]}}"#

    func live() async throws -> (ScriptedTransport, BoardClient) {
        let transport = ScriptedTransport()
        let client = BoardClient(transport: transport, token: "s3cret", params: ["team": "alpha"], options: quickOptions)
        try #require(await eventually { transport.connectionCount == 1 && !transport.sent(on: 0).isEmpty })
        transport.serve(0, [Self.welcome, Self.snapshot])
        try #require(await eventually { client.view.value?.title == "Groceries" })
        return (transport, client)
    }

    func hello(_ transport: ScriptedTransport, on index: Int) -> [String: Any] {
        transport.sent(on: index).first.map(object) ?? [:]
    }

    @Test("the hello carries protocol, token and params; a patch with set and a list patch is applied")
    func patch() async throws {
        let (transport, client) = try await live()
        #expect(transport.sent(on: 0).first == #"{"type":"hello","protocol":1,"token":"s3cret","params":{"team":"alpha"}}"#)
        transport.serve(0, [#"{"type":"patch","from":41,"version":44,"set":{"title":"Weekend","count":2},"lists":{"items":{"changes":{"inserts":[0],"updates":[0]},"elements":[{"id":"i7","text":"Eggs","done":false},{"id":"i1","text":"Milk","done":true}]}}}"#])
        #expect(await eventually { client.view.value?.title == "Weekend" })
        #expect(client.view.value == BoardView(title: "Weekend", count: 2, items: [Item(id: "i7", text: "Eggs"), Item(id: "i1", text: "Milk", done: true)]))
        await client.close()
    }

    @Test("a patch from another version is not applied: the client reconnects and resumes from its own")
    func gap() async throws {
        let (transport, client) = try await live()
        transport.serve(0, [#"{"type":"patch","from":42,"version":44,"set":{"title":"Weekend"}}"#])
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect(client.view.value?.title == "Groceries")
        let resume = try #require(hello(transport, on: 1)["resume"] as? [String: Any])
        #expect(resume["version"] as? Int == 41)
        #expect(resume["stream"] as? String == "s-5f0c1e2d3c4b5a69")
        await client.close()
    }

    @Test("a list patch that does not fit leaves the view and asks for a snapshot (no resume)")
    func misfit() async throws {
        let (transport, client) = try await live()
        transport.serve(0, [#"{"type":"patch","from":41,"version":42,"lists":{"items":{"changes":{"deletes":[5]},"elements":[]}}}"#])
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect(client.view.value?.items.count == 1)
        #expect(hello(transport, on: 1)["resume"] == nil)
        await client.close()
    }

    @Test("sends racing close() are all answered (closed), none left waiting")
    func sendsRacingClose() async throws {
        let (_, client) = try await live()
        let failures = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask {
                    do {
                        _ = try await client.send(.add(text: "item \(index)"))
                        return false
                    } catch {
                        return error as? LiveClientError == .closed
                    }
                }
            }
            group.addTask {
                await client.close()
                return true
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 21)
        #expect(client.status.value == .closed)
    }

    @Test("close 1001 reconnects and resumes; a window_full command is sent again with its cid")
    func goingAwayAndRetry() async throws {
        let (transport, client) = try await live()
        async let outcome = client.send(.add(text: "Tea"))
        #expect(await eventually { transport.sent(on: 0).count == 2 })
        let first = object(transport.sent(on: 0)[1])
        let cid = try #require(first["cid"] as? String)
        transport.serve(0, [#"{"type":"error","code":"window_full","message":"too many","ref":\#(first["ref"] as? Int ?? 0),"retry":true}"#])
        #expect(await eventually { transport.sent(on: 0).count == 3 })
        #expect(object(transport.sent(on: 0)[2])["cid"] as? String == cid)
        transport.serve(0, [], close: 1001)
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect((hello(transport, on: 1)["resume"] as? [String: Any])?["version"] as? Int == 41)
        transport.serve(1, [Self.welcome, #"{"type":"patch","from":41,"version":41}"#])
        #expect(await eventually { transport.sent(on: 1).count == 2 })
        #expect(object(transport.sent(on: 1)[1])["cid"] as? String == cid)
        transport.serve(1, [#"{"type":"ack","ref":\#(object(transport.sent(on: 1)[1])["ref"] as? Int ?? 0),"cid":"\#(cid)","version":42,"duplicate":true}"#])
        #expect(try await outcome == .duplicate(version: 42))
        await client.close()
    }
}
