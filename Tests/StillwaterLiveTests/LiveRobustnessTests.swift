import Foundation
import Stillwater
@testable import StillwaterLive
import StillwaterTesting
import Synchronization
import Testing

/// A value a task sets once, for a test to wait for without awaiting the task (which may never end
/// when the code under test is wrong).
final class Outcome<Value: Sendable>: Sendable {
    private let value = Mutex<Value??>(nil)

    func set(_ result: Value?) { value.withLock { $0 = .some(result) } }
    var result: Value?? { value.withLock { $0 } }
    var isSet: Bool { result != nil }
}

/// A transport wired to any hub's connections, each `connect()` a new one.
struct HubTransport<Service: LiveService>: LiveClientTransport {
    let hub: LiveHub<Service>

    func connect() async throws -> LiveClientChannel {
        let connection = hub.connect()
        let (incoming, sink) = AsyncStream.makeStream(of: LiveTransportEvent.self)
        let writer = Task {
            while let write = await connection.nextBatch() {
                switch write {
                case .frames(let frames): for frame in frames { sink.yield(.text(frame.text)) }
                case .close(let code, let reason):
                    sink.yield(.closed(code: code.rawValue, reason: reason))
                    connection.transportClosed()
                }
            }
            sink.finish()
        }
        return LiveClientChannel(incoming: incoming, send: { connection.receive($0) }, close: {
            writer.cancel()
            connection.transportClosed()
            sink.finish()
        })
    }
}

@Suite("LiveConnection.nextBatch() and cancellation", .timeLimit(.minutes(5)))
struct LiveConnectionCancellationTests {
    typealias Write = LiveWrite

    @Test("a task cancelled before it calls nextBatch() gets nil at once, and the frames wait for the next call",
          arguments: [false, true])
    func cancelledBefore(framesWaiting: Bool) async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        if framesWaiting {
            connection.receive(goodHello)
            try #require(await eventually { connection.hasWrite })
        }
        let outcome = Outcome<Write>()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            outcome.set(await connection.nextBatch())
        }
        #expect(await eventually { outcome.isSet })
        #expect(outcome.result == .some(nil))
        if framesWaiting {
            #expect(connection.hasWrite)
            guard let frames = await connection.nextBatch()?.texts else {
                Issue.record("the frames were lost")
                return
            }
            #expect(frames.map { object($0)["type"] as? String } == ["welcome", "snapshot"])
        }
        task.cancel()
        connection.transportClosed()
        await hub.close()
    }

    @Test("a task cancelled while it waits gets nil, and a later call from another task still gets frames")
    func cancelledWhileWaiting() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        let outcome = Outcome<Write>()
        let waiting = Task { outcome.set(await connection.nextBatch()) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!outcome.isSet)
        waiting.cancel()
        #expect(await eventually { outcome.isSet })
        #expect(outcome.result == .some(nil))
        // The cancellation belonged to that call only.
        let next = Outcome<Write>()
        let reader = Task { next.set(await connection.nextBatch()) }
        connection.receive(goodHello)
        #expect(await eventually { next.isSet })
        guard case .frames(let batch)?? = next.result else {
            Issue.record("no frames after the cancelled call")
            return
        }
        #expect(batch.map { object($0.text)["type"] as? String } == ["welcome", "snapshot"])
        reader.cancel()
        connection.transportClosed()
        await hub.close()
    }

    @Test("the waiter state machine: a cancellation before the wait is found by its call only")
    func waiterStates() {
        var waiter = WriteWaiter.idle
        let early = waiter.cancel(call: 1)
        #expect(early == nil)
        let found = waiter.takeCancellation(of: 1)
        let foundAgain = waiter.takeCancellation(of: 1)
        #expect(found && !foundAgain)
        // A cancellation that came after its call returned is dropped by the next call.
        _ = waiter.cancel(call: 2)
        let stale = waiter.takeCancellation(of: 3)
        #expect(!stale)
        #expect(!waiter.isWaiting)
    }
}

@Suite("LiveClient: problems the app sees, and its timers", .timeLimit(.minutes(3)))
struct LiveClientProblemTests {
    func live() async throws -> (ScriptedTransport, BoardClient) {
        let transport = ScriptedTransport()
        let client = BoardClient(transport: transport, token: "s3cret", options: quickOptions)
        try #require(await eventually { transport.connectionCount == 1 && !transport.sent(on: 0).isEmpty })
        transport.serve(0, [LiveClientScriptedTests.welcome, LiveClientScriptedTests.snapshot])
        try #require(await eventually { client.view.value?.title == "Groceries" })
        return (transport, client)
    }

    @Test("a server frame the client cannot read is an error the app sees, then a reconnect for a snapshot", arguments: [
        (#"not json"#, "not valid JSON"),
        (#"{"type":"patch","from":41,"version":42,"set":{"count":"two"}}"#, "at set.count: expected an integer"),
        (#"{"type":"patch","from":41,"version":42,"set":{"colour":"red"}}"#, "at set.colour"),
        (#"{"type":"snapshot","stream":"s-1","version":50,"view":{"title":"T","count":0}}"#, "at view: missing \"items\""),
        (#"{"type":"ack","version":"42"}"#, "at version: expected an integer"),
        (#"{"type":"patch","from":41,"version":42,"lists":{"items":{"changes":{"deletes":[5]},"elements":[]}}}"#,
         "does not fit"),
    ])
    func unreadable(frame: String, expected: String) async throws {
        let (transport, client) = try await live()
        transport.serve(0, [frame])
        #expect(await eventually { client.lastError.value != nil })
        guard case .unreadableFrame(let message)? = client.lastError.value else {
            Issue.record("not an unreadable frame: \(String(describing: client.lastError.value))")
            return
        }
        #expect(message.contains(expected), "\(message)")
        #expect(!message.contains("Swift") && !message.contains("BoardView"))
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect(object(transport.sent(on: 1)[0])["resume"] == nil)
        #expect(client.view.value?.title == "Groceries")
        await client.close()
    }

    @Test("a second welcome on one connection is an error the app sees; the copy is kept and resumed from")
    func secondWelcome() async throws {
        let (transport, client) = try await live()
        transport.serve(0, [LiveClientScriptedTests.welcome])
        #expect(await eventually { client.lastError.value != nil })
        #expect(client.lastError.value == .unreadableFrame("a second welcome on one connection"))
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect((object(transport.sent(on: 1)[0])["resume"] as? [String: Any])?["version"] as? Int == 41)
        await client.close()
    }

    @Test("a welcome for another protocol version is an error the app sees, and the client tries again")
    func otherProtocol() async throws {
        let transport = ScriptedTransport()
        let client = BoardClient(transport: transport, options: quickOptions)
        try #require(await eventually { transport.connectionCount == 1 && !transport.sent(on: 0).isEmpty })
        transport.serve(0, [#"{"type":"welcome","protocol":2,"stream":"s-1","window":8}"#])
        #expect(await eventually { client.lastError.value != nil })
        #expect(client.lastError.value == .unreadableFrame("the server speaks protocol 2; this client speaks 1"))
        #expect(await eventually { transport.connectionCount == 2 })
        await client.close()
    }

    @Test("a close 1011 after view_unavailable is told as a server error, and the client reconnects and resumes")
    func serverError() async throws {
        let (transport, client) = try await live()
        transport.serve(0, [#"{"type":"error","code":"view_unavailable","message":"the view at version 42 cannot be sent"}"#], close: 1011)
        #expect(await eventually { client.lastError.value != nil })
        #expect(client.lastError.value == .serverError(code: "view_unavailable", message: "the view at version 42 cannot be sent"))
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        let resume = object(transport.sent(on: 1)[0])["resume"] as? [String: Any]
        #expect(resume?["version"] as? Int == 41)
        #expect(!client.status.value.isFinal)
        await client.close()
    }

    @Test("a hub whose view holds a NaN: the client hears why it was closed, and is live again once the view encodes")
    func nanFromTheHub() async throws {
        let hub = try await MeterHub.make()
        let ticker = Task { await hub.run() }
        defer { ticker.cancel() }
        let client = LiveClient<MeterView, MeterCommand>(transport: HubTransport(hub: hub), options: quickOptions)
        try #require(await eventually { client.status.value == .live })
        _ = await hub.perform(.read("nan"), as: "server")
        #expect(await eventually { client.lastError.value != nil })
        guard case .serverError(let code, let message)? = client.lastError.value else {
            Issue.record("not a server error: \(String(describing: client.lastError.value))")
            return
        }
        #expect(code == "view_unavailable")
        #expect(message.contains("NaN"))
        _ = await hub.perform(.read("7"), as: "server")
        #expect(await eventually { client.view.value?.reading == 7 && client.status.value == .live })
        #expect(try await client.send(.label("porch")) == .applied(version: 3))
        await client.close()
        await hub.close()
    }

    @Test("timers do not pile up over many reconnects, and fired ones are removed")
    func timersBounded() async throws {
        let served = try await Served.make()
        defer { served.ticker.cancel() }
        let transport = InProcessTransport(hub: served.hub)
        let client = BoardClient(transport: transport, token: "good", options: LiveClientOptions(
            backoffInitial: .milliseconds(1), backoffMax: .milliseconds(2), helloTimeout: .milliseconds(800)))
        try #require(await eventually { client.status.value == .live })
        var most = 0
        for _ in 1...40 {
            // A slow machine (the thread sanitizer) may pass a hello wait and connect once more: count on
            // "a later connection, live", not on an exact number.
            let before = transport.connectionCount
            transport.dropCurrent()
            try #require(await eventually { transport.connectionCount > before && client.status.value == .live })
            most = max(most, await client.pendingTimers())
        }
        // One per kind at most: a hello wait, a reconnect, a retry, a heartbeat.
        #expect(most <= 4)
        // Once every timer fired (the live connection's hello wait last), only the live connection's
        // heartbeat is held.
        var left = await client.pendingTimers()
        for _ in 0..<400 where left > 1 {
            try await Task.sleep(for: .milliseconds(10))
            left = await client.pendingTimers()
        }
        #expect(left == 1)
        #expect(client.status.value == .live)
        await client.close()
        await served.hub.close()
    }
}

@Suite("Error texts to clients", .timeLimit(.minutes(5)))
struct LiveErrorTextTests {
    @Test("a frame that does not decode is described in the protocol's words, with no Swift type", arguments: [
        (#"{"type":"command","ref":1,"command":{"add":{"text":5}}}"#, "the command does not decode: at command.add.text: expected a string"),
        (#"{"type":"command","ref":1,"command":{"add":{}}}"#, "the command does not decode: at command.add: missing \"text\""),
        (#"{"type":"command","ref":1,"command":{"move":{"id":"a","to":1.5}}}"#, "the command does not decode: not valid JSON, or a number"),
        (#"{"type":"command","ref":1,"command":{"add":{"text":null}}}"#, "the command does not decode: at command.add.text: expected a string, found null"),
        (#"{"type":"command","ref":1,"command":[1]}"#, "the command does not decode: at command: expected an object"),
        (#"{"type":"command","ref":1,"command":{"explode":{}}}"#, "the command does not decode"),
        (#"{"type":"command","ref":1,"command":{"add":{"text":"a"},"toggle":{"id":"b"}}}"#, "the command does not decode"),
        (#"{"type":"command","ref":1,"command":{"move":{"id":"a","to":1e400}}}"#, "the command does not decode: not valid JSON, or a number"),
        (#"{"type":"hello","protocol":"one"}"#, "a hello frame: at protocol: expected an integer"),
        (#"{"type":"hello","protocol":1,"params":{"team":1}}"#, "a hello frame: at params.team: expected a string"),
        (#"{"type":"hello","protocol":1,"params":[]}"#, "a hello frame: at params: expected an object"),
        (#"{"type":"hello","protocol":1,"resume":{"stream":"s"}}"#, "a hello frame: at resume: missing \"version\""),
        (#"{"type":"command","ref":1,"cid":7,"command":{}}"#, "a command frame: at cid: expected a string"),
    ])
    func described(frame: String, expected: String) throws {
        let error = try #require(Result { () throws(LiveFrameError) in
            try LiveClientFrame<BoardCommand>.decode(frame, maxBytes: 10_000)
        }.error)
        #expect(error.message.hasPrefix(expected), "\(error.message)")
        for name in ["Swift", "Int", "String", "Double", "Dictionary", "Array", "Optional", "BoardCommand", "CodingKeys", "Decoding"] {
            #expect(!error.message.contains(name), "\(error.message) names \(name)")
        }
    }

    @Test("the kinds a decoder may want are named as JSON names them")
    func kinds() {
        #expect(LiveJSON.kind(of: String.self) == "a string")
        #expect(LiveJSON.kind(of: UInt8.self) == "an integer")
        #expect(LiveJSON.kind(of: Float.self) == "a number")
        #expect(LiveJSON.kind(of: Bool.self) == "true or false")
        #expect(LiveJSON.kind(of: [String: Any].self) == "an object")
        #expect(LiveJSON.kind(of: [Any].self) == "an array")
        #expect(LiveJSON.path([AnyKey("items"), IndexKey(2), AnyKey("price")]) == "items[2].price")
    }

    struct IndexKey: CodingKey {
        var intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
