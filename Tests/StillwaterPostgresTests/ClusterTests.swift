#if Postgres
import Foundation
import Stillwater
import StillwaterLive
import StillwaterPostgres
import Testing

/// A list of texts, served live.
struct Texts: Codable, Sendable, Equatable {
    var texts: [String] = []
}

struct AppendText: Action, Codable, Sendable {
    var text: String
    func reduce(_ state: inout Texts) { state.texts.append(text) }
}

struct TextsView: LiveView {
    var texts: [String]
    static let liveFields: [LiveField<TextsView>] = [.value("texts", \.texts)]
}

struct TextsService: LiveService {
    func view(of state: Texts) -> TextsView { TextsView(texts: state.texts) }
    func decide(_ command: String, state: Texts, identity: String) -> LiveDecision<AppendText> { .accept(AppendText(text: command)) }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("anyone") }
}

@Suite("LiveHubs on one PostgreSQL log",
       .enabled(if: databaseURL != nil, "LIVE_POSTGRES_URL is not set: these tests need a PostgreSQL to run against"),
       .serialized)
struct PostgresClusterTests {
    @Test("two hubs on one log apply every command in the log's order, told of the other's by notifications")
    func twoHubs() async throws {
        let journal = try PostgresJournal<LiveLogState<Texts>, LiveEntry<AppendText>>(url: databaseURL!, prefix: "test")
        try await journal.prepare()
        let name = "cluster-" + UUID().uuidString.lowercased()
        let first = try await LiveHub.open(TextsService(), log: journal.log(named: name), initial: Texts())
        let second = try await LiveHub.open(TextsService(), log: journal.log(named: name), initial: Texts(texts: ["never used"]))
        #expect(first.stream == second.stream)
        // Each hub hears of the other's appends as a notification names the log's new head.
        let listening = Task {
            for await event in journal.events() {
                if case .appended(let log, let head) = event, log == name {
                    first.advance(to: Int(head))
                    second.advance(to: Int(head))
                }
            }
        }
        defer { listening.cancel() }
        try await Task.sleep(for: .milliseconds(200))  // the LISTEN is in place
        async let a = first.perform("a1", cid: "a1", as: "ann")
        async let b = second.perform("b1", cid: "b1", as: "bob")
        let (outcomeA, outcomeB) = await (a, b)
        #expect([outcomeA, outcomeB].map { "\($0)" }.sorted() == ["applied(version: 1)", "applied(version: 2)"])
        for index in 0..<10 { _ = await (index % 2 == 0 ? first : second).perform("n\(index)", cid: "n\(index)", as: "ann") }
        // A command id sent again on the other hub is answered from the log, not applied twice.
        #expect(await second.perform("a1", cid: "a1", as: "ann") == outcomeA.duplicateOf)
        let deadline = ContinuousClock.now + .seconds(10)
        while first.version != 12 || second.version != 12, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(first.view == second.view)
        #expect(first.view.texts.count == 12)
        #expect(first.state.value == second.state.value)
        await first.close()
        await second.close()
        await journal.close()
    }
}

extension LiveOutcome {
    /// The answer to the same command sent again: a duplicate at the version it made.
    var duplicateOf: LiveOutcome {
        if case .applied(let version) = self { return .duplicate(version: version) }
        return self
    }
}
#endif
