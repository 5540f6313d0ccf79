#if Postgres
import Foundation
import Stillwater
import StillwaterLive
import StillwaterPostgres
import StillwaterTesting
import Testing

/// Seats that one person at a time may hold.
struct Seats: Codable, Sendable, Equatable {
    var holders: [String: String] = [:]
}

struct Claim: Action, Codable, Sendable {
    var seat: String
    var holder: String
    func reduce(_ state: inout Seats) {
        if state.holders[seat] == nil { state.holders[seat] = holder }
    }
}

struct SeatsView: LiveView {
    var taken: Int
    static let liveFields: [LiveField<SeatsView>] = [.value("taken", \.taken)]
}

struct SeatsService: LiveService {
    func view(of state: Seats) -> SeatsView { SeatsView(taken: state.holders.count) }
    func decide(_ seat: String, state: Seats, identity: String) -> LiveDecision<Claim> {
        state.holders[seat] == nil ? .accept(Claim(seat: seat, holder: identity)) : .reject("seat \(seat) is taken")
    }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("anyone") }
}

@Suite("One decision per command on a PostgreSQL log",
       .enabled(if: databaseURL != nil, "LIVE_POSTGRES_URL is not set: these tests need a PostgreSQL to run against"),
       .serialized, .timeLimit(.minutes(10)))
struct PostgresRaceTests {
    @Test("three nodes, two clients on different nodes claiming the same seat 200 times: exactly one accepted each time, every replica equal")
    func claimRace() async throws {
        let name = "race-" + UUID().uuidString.lowercased()
        // Three nodes: each a journal with connections of its own, as three processes would have.
        var journals: [PostgresJournal<LiveLogState<Seats>, LiveEntry<Claim>>] = []
        var hubs: [LiveHub<SeatsService>] = []
        for _ in 0..<3 {
            let journal = try PostgresJournal<LiveLogState<Seats>, LiveEntry<Claim>>(url: databaseURL!, prefix: "once")
            try await journal.prepare()
            journals.append(journal)
            hubs.append(try await LiveHub.open(SeatsService(), log: journal.log(named: name), initial: Seats()))
        }
        let first = hubs[0], second = hubs[1]
        let ann = first.newClient(), bob = second.newClient()
        for round in 1...200 {
            let seat = "s\(round)"
            async let a = first.perform(seat, client: ann, seq: round, as: "ann")
            async let b = second.perform(seat, client: bob, seq: round, as: "bob")
            let outcomes = await [a, b]
            let applied = outcomes.filter { if case .applied = $0 { true } else { false } }
            let rejected = outcomes.filter { $0 == .rejected("seat \(seat) is taken") }
            // Neither node follows the other's appends: the later of the two decided on a state without the
            // seat's claim, was refused by the log, caught up and decided again.
            #expect(applied.count == 1 && rejected.count == 1, "round \(round): \(outcomes)")
        }
        for hub in hubs { try await hub.refresh() }
        let states = hubs.map { $0.state.value }
        #expect(states[0].holders.count == 200)
        #expect(states.allSatisfy { $0 == states[0] })
        #expect(hubs.allSatisfy { $0.view == hubs[0].view && $0.version == hubs[0].version })
        // Every recorded claim holds its seat: no acknowledged claim lost its seat to a later one.
        #expect(Set(states[0].holders.values).isSubset(of: ["ann", "bob"]))
        for hub in hubs { await hub.close() }
        for journal in journals { await journal.close() }
    }

    @Test("a conditional append on a moved head appends nothing and names the head")
    func conflict() async throws {
        let journal = try PostgresJournal<LiveLogState<Seats>, LiveEntry<Claim>>(url: databaseURL!, prefix: "once")
        try await journal.prepare()
        let log = journal.log(named: "conflict-" + UUID().uuidString.lowercased())
        _ = try await log.open()
        #expect(try await log.append([LiveEntry(action: Claim(seat: "a", holder: "ann"))], ifHeadIs: 0) == 1...1)
        await #expect(throws: ActionLogConflict(head: 1)) {
            _ = try await log.append([LiveEntry(action: Claim(seat: "b", holder: "bob"))], ifHeadIs: 0)
        }
        #expect(try await log.head() == 1)
        #expect(try await log.append([LiveEntry(action: Claim(seat: "b", holder: "bob"))], ifHeadIs: 1) == 2...2)
        await journal.close()
    }

    @Test("a numbered command retried after 1 000 000 others is a duplicate")
    func lateRetry() async throws {
        let journal = try PostgresJournal<LiveLogState<LiveLogConformance.Count>, LiveEntry<LiveLogConformance.Bump>>(
            url: databaseURL!, prefix: "once", keptActions: 100_000)
        try await journal.prepare()
        // Appends of 2 000 records, each well inside the journal's statement timeout on a loaded machine.
        let report = await LiveLogConformance.checkLateRetry(
            batch: 2_000, log: journal.log(named: "late-" + UUID().uuidString.lowercased()))
        #expect(report.failures.isEmpty && report.checks == 5)
        await journal.close()
    }
}
#endif
