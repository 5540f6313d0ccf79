#if Postgres
import Foundation
import Stillwater
import StillwaterLive
import StillwaterPostgres
import Synchronization
import Testing

/// A room whose clients are shown by name in presence frames.
struct Lobby: Codable, Sendable { var visits = 0 }
struct Visit: Action, Codable, Sendable { func reduce(_ state: inout Lobby) { state.visits += 1 } }
struct LobbyView: LiveView {
    var visits: Int
    static let liveFields: [LiveField<LobbyView>] = [.value("visits", \.visits)]
}
struct LobbyService: LiveService {
    func view(of state: Lobby) -> LobbyView { LobbyView(visits: state.visits) }
    func decide(_ command: String, state: Lobby, identity: String) -> LiveDecision<Visit> { .accept(Visit()) }
    func presence(of identity: String) -> String? { identity }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted(handshake.token ?? "nobody") }
}

/// Every frame a connection was written, collected by a task that drains it as an adapter would.
final class Collected: Sendable {
    private let frames = Mutex<[String]>([])
    var all: [String] { frames.withLock { $0 } }

    init(_ connection: LiveConnection<LobbyService>) {
        Task { [weak self] in
            while let write = await connection.nextBatch() {
                guard case .frames(let batch) = write else { return }
                let texts = batch.map(\.text)
                self?.frames.withLock { $0 += texts }
            }
        }
    }

    /// The names present after applying every presence frame, as a client does.
    var present: Set<String> {
        var present: [String: String] = [:]
        for frame in all {
            guard let object = try? JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any],
                  object["type"] as? String == "presence" else { continue }
            if let state = object["state"] as? [String: String] { present = state }
            for left in object["leaves"] as? [String] ?? [] { present[left] = nil }
            for (client, name) in object["joins"] as? [String: String] ?? [:] { present[client] = name }
        }
        return Set(present.values)
    }
}

@Suite("Presence across a cluster through PostgreSQL",
       .enabled(if: databaseURL != nil, "LIVE_POSTGRES_URL is not set: these tests need a PostgreSQL to run against"),
       .serialized, .timeLimit(.minutes(2)))
struct PostgresPresenceTests {
    typealias Journal = PostgresJournal<LiveLogState<Lobby>, LiveEntry<Visit>>

    func node(_ name: String, room: String) async throws -> (LiveHub<LobbyService>, PostgresPresenceExchange<LiveLogState<Lobby>, LiveEntry<Visit>>, Task<Void, Never>) {
        let journal = try Journal(url: databaseURL!, prefix: "lobby")
        try await journal.prepare()
        let hub = try await LiveHub.open(LobbyService(), log: MemoryJournal<LiveLogState<Lobby>, LiveEntry<Visit>>(), initial: Lobby(),
                                         options: LiveOptions(patchInterval: .milliseconds(20)))
        let exchange = PostgresPresenceExchange(journal: journal, node: name, interval: .milliseconds(200), ttl: .milliseconds(800))
        exchange.share(hub, as: room)
        let ticking = Task { await hub.run() }
        return (hub, exchange, ticking)
    }

    func join(_ hub: LiveHub<LobbyService>, as name: String) -> (LiveConnection<LobbyService>, Collected) {
        let connection = hub.connect()
        let collected = Collected(connection)
        connection.receive(#"{"type":"hello","protocol":1,"token":"\#(name)"}"#)
        return (connection, collected)
    }

    func eventually(within seconds: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test("two servers show each other's clients; a killed server's clients leave within ttl + interval, a stopped one's at once")
    func acrossServers() async throws {
        let room = "lobby-" + UUID().uuidString.lowercased()
        let (east, eastExchange, eastTicking) = try await node("east", room: room)
        let (west, westExchange, westTicking) = try await node("west", room: room)
        let (south, southExchange, southTicking) = try await node("south", room: room)
        defer { for task in [eastTicking, westTicking, southTicking] { task.cancel() } }
        let (_, ann) = join(east, as: "ann")
        let (_, bob) = join(west, as: "bob")
        let (_, cat) = join(south, as: "cat")
        // East is killed later: its rounds run in a task of the test's, which stops without a word.
        let eastRounds = Task {
            while !Task.isCancelled {
                await eastExchange.exchange()
                try? await Task.sleep(for: eastExchange.interval)
            }
        }
        let westRun = Task { await westExchange.run() }
        let southRun = Task { await southExchange.run() }
        defer { westRun.cancel() }
        #expect(await eventually(within: 10) { [ann, bob, cat].allSatisfy { $0.present == ["ann", "bob", "cat"] } })

        eastRounds.cancel()                               // killed: its row stays until its ttl passes
        let killed = ContinuousClock.now
        #expect(await eventually(within: 10) { bob.present == ["bob", "cat"] && cat.present == ["bob", "cat"] })
        let took = ContinuousClock.now - killed
        #expect(took < .milliseconds(800 + 200 + 600))     // ttl + interval, and the ticks and the test's polling
        #expect(ann.present == ["ann", "bob", "cat"])     // east's own client, cut off from the others' news, keeps what it knew

        southRun.cancel()                                 // stopped: its row is removed as it ends
        await southRun.value
        #expect(await eventually(within: 10) { bob.present == ["bob"] })
    }
}
#endif

#if Postgres
/// Tells which presence rounds failed.
final class PresenceFailures: LiveObserver {
    private let failures = Mutex<[String]>([])
    var all: [String] { failures.withLock { $0 } }
    func record(_ event: LiveEvent) {
        if case .presenceExchangeFailed(let room, let node, _) = event { failures.withLock { $0.append("\(room) \(node)") } }
    }
}

@Suite("Presence exchange failures reach the hub's observer", .timeLimit(.minutes(1)))
struct PresenceFailureTests {
    @Test("a round against a database nobody listens on is told to the hub's observer, once per room and round")
    func unreachable() async throws {
        // A port nothing listens on: each use fails within the short timeouts.
        let journal = try PostgresJournal<LiveLogState<Lobby>, LiveEntry<Visit>>(
            url: "postgres://postgres@127.0.0.1:9/postgres", prefix: "lobby",
            options: PostgresJournalOptions(connectTimeout: .milliseconds(200), timeout: .milliseconds(500)))
        let failures = PresenceFailures()
        var options = LiveOptions()
        options.observer = failures
        let hub = try await LiveHub.open(LobbyService(), log: MemoryJournal<LiveLogState<Lobby>, LiveEntry<Visit>>(), initial: Lobby(),
                                         options: options)
        let exchange = PostgresPresenceExchange(journal: journal, node: "node-x")
        exchange.share(hub, as: "lobby-down")
        await exchange.exchange()
        #expect(failures.all == ["lobby-down node-x"])
        await exchange.stopSharing("lobby-down")              // removing its row fails the same way, and is told
        #expect(failures.all == ["lobby-down node-x", "lobby-down node-x"])
        await hub.close()
    }
}
#endif
