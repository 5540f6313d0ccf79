import Foundation
import Stillwater
import StillwaterLive
import StillwaterTesting
import Synchronization
import Testing

/// A clock the test moves by hand.
final class TestWallClock: Sendable {
    private let time: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { time = Mutex(start) }

    var now: Date { time.withLock { $0 } }

    func advance(by seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite("Exactly once: numbered commands, one decision per command", .timeLimit(.minutes(5)))
struct LiveExactlyOnceTests {
    @Test("a numbered command retried after thousands of other clients' commands is a duplicate with its version")
    func lateRetry() async throws {
        let hub = try await BoardHub.make()
        let ann = hub.newClient()
        #expect(await hub.perform(.add(text: "milk"), client: ann, seq: 1, as: "ann") == .applied(version: 1))
        // More other clients than RecentCommandIDs.capacity, each with a command.
        for index in 0..<(RecentCommandIDs.capacity + 50) {
            _ = await hub.perform(.setTitle("t\(index % 3)"), client: hub.newClient(), seq: 1, as: "bob")
        }
        #expect(await hub.perform(.add(text: "milk"), client: ann, seq: 1, as: "ann") == .duplicate(version: 1))
        #expect(hub.view.items.map(\.text) == ["milk"])
    }

    @Test("numbers are contiguous: a gap is out of order, a lower number a duplicate of the client's latest")
    func ordering() async throws {
        let hub = try await BoardHub.make()
        let ann = hub.newClient()
        #expect(await hub.perform(.add(text: "a"), client: ann, seq: 2, as: "ann") == .outOfOrder(expected: 1))
        #expect(hub.version == 0)
        #expect(await hub.perform(.add(text: "a"), client: ann, seq: 1, as: "ann") == .applied(version: 1))
        #expect(await hub.perform(.add(text: "b"), client: ann, seq: 2, as: "ann") == .applied(version: 2))
        #expect(await hub.perform(.add(text: "c"), client: ann, seq: 4, as: "ann") == .outOfOrder(expected: 3))
        // Below the latest: answered with the latest's version (the view shows both from there on).
        #expect(await hub.perform(.add(text: "a"), client: ann, seq: 1, as: "ann") == .duplicate(version: 2))
        #expect(hub.view.items.map(\.text) == ["a", "b"])
    }

    @Test("a numbered refusal is recorded: the same number is refused again, and the next number follows it")
    func refusalRecorded() async throws {
        let hub = try await BoardHub.make()
        let ann = hub.newClient()
        #expect(await hub.perform(.delete(id: "nope"), client: ann, seq: 1, as: "ann") == .rejected("no item with id \"nope\""))
        #expect(hub.version == 1)
        #expect(await hub.perform(.add(text: "nope"), client: ann, seq: 1, as: "ann") == .rejected("no item with id \"nope\""))
        #expect(await hub.perform(.add(text: "a"), client: ann, seq: 2, as: "ann") == .applied(version: 2))
        #expect(hub.view.items.map(\.text) == ["a"])
    }

    @Test("an unavailable command leaves its number free: the next one is out of order until it is sent again")
    func unavailableKeepsTheNumber() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log)
        let ann = hub.newClient()
        log.failNextAppend()
        let failed = await hub.perform(.add(text: "a"), client: ann, seq: 1, as: "ann")
        #expect(failed == .unavailable("the log could not record the command; try again later"))
        #expect(await hub.perform(.add(text: "b"), client: ann, seq: 2, as: "ann") == .outOfOrder(expected: 1))
        #expect(await hub.perform(.add(text: "a"), client: ann, seq: 1, as: "ann") == .applied(version: 1))
        #expect(await hub.perform(.add(text: "b"), client: ann, seq: 2, as: "ann") == .applied(version: 2))
    }

    @Test("one batch: a repeated number is a duplicate of its entry, and every answer comes in the order submitted")
    func batchOrder() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log)
        let ann = hub.newClient()
        log.hold()
        let first = Task { await hub.perform(.setTitle("x"), as: "server") }
        await log.appendHeld()
        let answers = Mutex<[Int]>([])
        let outcomes = Mutex<[Int: LiveOutcome]>([:])
        // Every third command refused; a repeated number in the middle.
        let numbers = [1, 2, 3, 3, 4, 5, 6, 7, 8, 9]
        for (index, seq) in numbers.enumerated() {
            let command: BoardCommand = seq % 3 == 0 ? .toggle(id: "missing") : .add(text: "n\(seq)")
            hub.submit(command, client: ann, seq: seq, as: "ann") { outcome in
                answers.withLock { $0.append(index) }
                outcomes.withLock { $0[index] = outcome }
            }
        }
        log.release()
        _ = await first.value
        await hub.settle()
        #expect(answers.withLock { $0 } == Array(0..<numbers.count))
        let all = outcomes.withLock { $0 }
        #expect(all[2] == .rejected("no item with id \"missing\""))
        #expect(all[3] == .rejected("no item with id \"missing\""))
        #expect(all[1] == .applied(version: 3))
        #expect(hub.view.items.map(\.text) == ["n1", "n2", "n4", "n5", "n7", "n8"])
    }

    @Test("rejected commands are answered in the order submitted, among accepted ones (one thread, every tenth refused)")
    func rejectedInOrder() async throws {
        let hub = try await BoardHub.make()
        let order = Mutex<[Int]>([])
        for index in 0..<200 {
            let command: BoardCommand = index % 10 == 9 ? .delete(id: "missing") : .add(text: "\(index)")
            hub.submit(command, as: "ann") { _ in order.withLock { $0.append(index) } }
        }
        await hub.settle()
        #expect(order.withLock { $0 } == Array(0..<200))
    }

    @Test("numbers survive a restart: the log's snapshot and records carry the clients")
    func acrossRestart() async throws {
        let log = BoardLog()
        let ann: LiveClientID
        do {
            let hub = try await BoardHub.make(log: log, options: LiveOptions(snapshotEvery: 3))
            ann = hub.newClient()
            for seq in 1...5 { #expect(await hub.perform(.add(text: "\(seq)"), client: ann, seq: seq, as: "ann") == .applied(version: seq)) }
            await hub.close()
        }
        let hub = try await BoardHub.make(log: log)
        #expect(await hub.perform(.add(text: "5"), client: ann, seq: 5, as: "ann") == .duplicate(version: 5))
        #expect(await hub.perform(.add(text: "4"), client: ann, seq: 4, as: "ann") == .duplicate(version: 5))
        #expect(await hub.perform(.add(text: "6"), client: ann, seq: 6, as: "ann") == .applied(version: 6))
    }

    @Test("a client unseen for longer than the retention is forgotten; its old id is refused, a new one works")
    func expiry() async throws {
        let clock = TestWallClock()
        let hub = try await BoardHub.make(options: dayRetention(clock))
        let old = hub.newClient()
        let unused = hub.newClient()
        #expect(await hub.perform(.add(text: "a"), client: old, seq: 1, as: "ann") == .applied(version: 1))
        clock.advance(by: 2 * 86_400)
        // Another client's command moves the log's clock on; the old client is forgotten.
        let bob = hub.newClient()
        #expect(await hub.perform(.setTitle("b"), client: bob, seq: 1, as: "bob") == .applied(version: 2))
        let retry = await hub.perform(.add(text: "a"), client: old, seq: 1, as: "ann")
        guard case .clientExpired(let message) = retry else {
            Issue.record("expected clientExpired, got \(retry)")
            return
        }
        #expect(message.contains("start again without the id"))
        #expect(await hub.perform(.add(text: "a"), client: old, seq: 2, as: "ann") == .clientExpired(message))
        // An id issued long ago that never recorded a command cannot be told from a forgotten one.
        #expect(await hub.perform(.add(text: "u"), client: unused, seq: 1, as: "ann") == .clientExpired(message))
        #expect(hub.view.items.map(\.text) == ["a"])
        #expect(await hub.perform(.add(text: "c"), client: hub.newClient(), seq: 1, as: "ann") == .applied(version: 3))
    }

    @Test("a client seen within the retention is kept, however long ago its id was issued")
    func activeClientKept() async throws {
        let clock = TestWallClock()
        let hub = try await BoardHub.make(options: dayRetention(clock))
        let ann = hub.newClient()
        for seq in 1...5 {
            #expect(await hub.perform(.add(text: "\(seq)"), client: ann, seq: seq, as: "ann") == .applied(version: seq))
            clock.advance(by: 80_000)
        }
        #expect(await hub.perform(.add(text: "5"), client: ann, seq: 5, as: "ann") == .duplicate(version: 5))
    }

    @Test("two hubs on one log: a command decided on a stale state is decided again, not applied blindly")
    func staleDecisionDecidedAgain() async throws {
        let log = BoardLog()
        let first = try await BoardHub.make(log: log)
        let second = try await BoardHub.make(log: log)
        #expect(await first.perform(.add(text: "seat"), as: "ann") == .applied(version: 1))
        try await second.refresh()
        // The first hub deletes the seat; the second has not heard of it and still sees the seat.
        #expect(await first.perform(.delete(id: "i1"), as: "ann") == .applied(version: 2))
        let claim = await second.perform(.toggle(id: "i1"), client: second.newClient(), seq: 1, as: "bob")
        #expect(claim == .rejected("no item with id \"i1\""))
        #expect(log.conflicts == 1)
        #expect(second.version == 3)
        try await first.refresh()
        #expect(first.view == second.view)
    }

    @Test("over the protocol: the welcome names the client, numbered commands are acked with their seq, a retry on a new connection is a duplicate")
    func overTheWire() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        connection.receive(goodHello)
        let welcome = object(try #require(await take(connection).first))
        let client = try #require(welcome["client"] as? String)
        #expect(LiveClientID(client) != nil)
        connection.receive(#"{"type":"command","ref":1,"seq":1,"command":{"add":{"text":"milk"}}}"#)
        let ack = object(try #require(await take(connection).first))
        #expect(ack["seq"] as? Int == 1 && ack["version"] as? Int == 1 && ack["duplicate"] == nil)

        let again = hub.connect()
        again.receive(#"{"type":"hello","protocol":1,"token":"good","client":"\#(client)"}"#)
        let secondWelcome = object(try #require(await take(again).first))
        #expect(secondWelcome["client"] as? String == client)
        again.receive(#"{"type":"command","ref":1,"seq":1,"command":{"add":{"text":"milk"}}}"#)
        again.receive(#"{"type":"command","ref":2,"seq":3,"command":{"add":{"text":"eggs"}}}"#)
        let answers = await take(again, count: 2).map(object)
        #expect(answers[0]["duplicate"] as? Bool == true && answers[0]["version"] as? Int == 1)
        #expect(answers[1]["code"] as? String == "out_of_order" && answers[1]["expected"] as? Int == 2
            && answers[1]["retry"] as? Bool == true && answers[1]["seq"] as? Int == 3)
        #expect(hub.view.items.map(\.text) == ["milk"])
    }

    @Test("a numbered command before the welcome of a hello without an id is refused; a malformed id closes with 4400")
    func numberedBeforeTheWelcome() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        connection.receive(goodHello)
        connection.receive(#"{"type":"command","ref":1,"seq":1,"command":{"add":{"text":"milk"}}}"#)
        let frames = await take(connection, count: 3).map(object)
        let refusal = try #require(frames.first { $0["type"] as? String == "error" })
        #expect(refusal["code"] as? String == "malformed" && refusal["ref"] as? Int == 1)
        #expect(hub.version == 0)

        let bad = hub.connect()
        bad.receive(#"{"type":"hello","protocol":1,"token":"good","client":"not-an-id"}"#)
        let error = object(try #require(await take(bad).first))
        #expect(error["code"] as? String == "malformed")
        if case .close(let code, _)? = await bad.nextBatch() { #expect(code == .protocolError) } else { Issue.record("no close") }
    }

    @Test("client ids: the text round-trips, malformed texts are refused")
    func clientIDText() {
        let id = LiveClientID(issuedAt: 1_700_000_000_000, random: 42)
        #expect(id.text == "c018bcfe56800-000000000000002a")
        #expect(LiveClientID(id.text) == id)
        for bad in ["", "c018bcfe56800-000000000000002", "C018bcfe56800-000000000000002a", "c018bcfe56800_000000000000002a",
                    "c018BCFE56800-000000000000002a", "c018bcfe56800-000000000000002a0", "x018bcfe56800-000000000000002a"] {
            #expect(LiveClientID(bad) == nil, "\(bad)")
        }
        let table = try? JSONDecoder().decode([LiveClientID: Int].self, from: Data(#"{"c018bcfe56800-000000000000002a":3}"#.utf8))
        #expect(table == [id: 3])
    }

    @Test("a snapshot written before clients were numbered still opens, with an empty client table")
    func oldSnapshot() throws {
        let json = #"{"state":{"title":"Board","items":[],"nextID":1},"version":4,"stream":"s-1","recentCommands":{"versions":{},"order":[],"next":0}}"#
        let state = try JSONDecoder().decode(LiveLogState<Board>.self, from: Data(json.utf8))
        #expect(state.version == 4 && state.clients.count == 0)
        #expect(state.clients.retention == 30 * 86_400_000)
    }
}

/// A total that commands scale: a NaN factor makes an action no JSON log can store.
struct Total: Codable, Sendable { var value = 1.0 }
struct Scale: Action, Codable, Sendable {
    var factor: Double
    func reduce(_ total: inout Total) { total.value *= factor }
}
struct TotalView: LiveView {
    var value: Double
    static let liveFields: [LiveField<TotalView>] = [.value("value", \.value)]
}
struct Scaler: LiveService {
    func view(of state: Total) -> TotalView { TotalView(value: state.value.isFinite ? state.value : 0) }
    func decide(_ command: Double, state: Total, identity: String) -> LiveDecision<Scale> { .accept(Scale(factor: command)) }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("anyone") }
}

@Suite("An action that cannot be stored", .timeLimit(.minutes(5)))
struct LiveUnstorableActionTests {
    @Test("is refused with where and why, in the protocol's words; the other commands of its batch are recorded; a numbered one uses its number")
    func refused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unstorable-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try FileJournal<LiveLogState<Total>, LiveEntry<Scale>>(directory: directory)
        let hub = try await LiveHub.open(Scaler(), log: log, initial: Total())
        let client = hub.newClient()
        let outcomes = Mutex<[Int: LiveOutcome]>([:])
        for (index, factor) in [2.0, .nan, 3.0].enumerated() {
            hub.submit(factor, client: client, seq: index + 1, as: "ann") { outcome in outcomes.withLock { $0[index] = outcome } }
        }
        hub.submit(.infinity, as: "ann") { outcome in outcomes.withLock { $0[3] = outcome } }
        await hub.settle()
        let all = outcomes.withLock { $0 }
        #expect(all[0] == .applied(version: 1))
        guard case .rejected(let message)? = all[1] else {
            Issue.record("expected a refusal, got \(String(describing: all[1]))")
            return
        }
        #expect(message.hasPrefix("the command's action cannot be stored") && message.contains("NaN"))
        #expect(!message.contains("Swift") && !message.contains(directory))
        #expect(all[2] == .applied(version: 3))
        guard case .rejected? = all[3] else {
            Issue.record("expected a refusal, got \(String(describing: all[3]))")
            return
        }
        #expect(hub.state.value.value == 6)
        // The number was used (the refusal made version 2): sent again it is not decided again (below the
        // client's latest, it is answered with the latest's version); the next number follows the batch.
        #expect(await hub.perform(.nan, client: client, seq: 2, as: "ann") == .duplicate(version: 3))
        #expect(await hub.perform(5, client: client, seq: 4, as: "ann") == .applied(version: 4))
        await hub.close()
    }
}

/// Options that keep clients for a day, by `clock`.
private func dayRetention(_ clock: TestWallClock) -> LiveOptions {
    var options = LiveOptions()
    options.clientRetention = .seconds(86_400)
    options.now = { clock.now }
    return options
}

/// Takes the frames the connection has to write until `count` were taken.
private func take(_ connection: LiveConnection<BoardService>, count: Int = 1) async -> [String] {
    var frames: [String] = []
    while frames.count < count {
        guard let more = await connection.nextBatch()?.texts else { break }
        frames += more
    }
    return frames
}
