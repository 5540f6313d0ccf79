import Foundation
import LiveServerCore
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

/// Members and viewers of one board, and who is on it: through the Swift client on the in-process
/// transport, and through the hub's connections for the frames the Swift client does not expose
/// (`you` in the welcome, `presence`).
@Suite("Members, viewers and who is on the board", .timeLimit(.minutes(1)))
struct AudienceTests {
    typealias Log = MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>
    static let memberToken = "alpha-secret-token"
    static var viewerToken: String { ViewerTokens.token(forMemberToken: memberToken) }

    /// Team alpha's board, admitting its members' token and its viewer token, ticking until the test ends.
    static func withBoard<R>(_ body: (LiveHub<BoardService>) async throws -> R) async throws -> R {
        let digests = ["alpha": LiveTokens.digest(of: memberToken), "beta": LiveTokens.digest(of: "beta-secret-token")]
        let service = BoardService(
            team: "alpha", access: LiveTokenTable(digests: digests),
            viewers: LiveTokenTable(digests: ViewerTokens.digests(forMemberDigests: digests)))
        let hub = try await LiveHub.open(service, log: Log(), initial: Board(title: "Groceries", texts: ["bread"]))
        let ticking = Task { await hub.run() }
        defer { ticking.cancel() }
        return try await body(hub)
    }

    static func client(_ hub: LiveHub<BoardService>, token: String, name: String) -> LiveClient<LiveBoardView, BoardCommand> {
        LiveClient(transport: LiveInProcessTransport(hub: hub), token: token, params: ["team": "alpha", "name": name])
    }

    static func object(_ frame: String) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(frame.utf8))) as? [String: Any]) ?? [:]
    }

    /// A raw connection to `hub` that says hello with `token` and `name`, and records every frame it is sent.
    final class Watcher: Sendable {
        let connection: LiveConnection<BoardService>
        let texts: Locked<[String]>
        let reader: Task<Void, Never>

        init(_ hub: LiveHub<BoardService>, token: String, name: String) {
            let connection = hub.connect()
            let texts = Locked<[String]>([])
            self.connection = connection
            self.texts = texts
            reader = Task {
                while let write = await connection.nextBatch() {
                    guard case .frames(let frames) = write else { continue }
                    texts.withLock { $0 += frames.map(\.text) }
                }
            }
            connection.receive(#"{"type":"hello","protocol":1,"token":"\#(token)","params":{"team":"alpha","name":"\#(name)"}}"#)
        }

        /// Every frame so far, as JSON objects.
        var frames: [[String: Any]] { texts.withLock { $0 }.map(AudienceTests.object) }

        /// The welcome's `you`.
        var you: [String: Any]? {
            frames.first { $0["type"] as? String == "welcome" }?["you"] as? [String: Any]
        }

        /// Who is present as the presence frames so far say: client id → entry.
        var present: [String: [String: Any]] {
            var present: [String: [String: Any]] = [:]
            for frame in frames where frame["type"] as? String == "presence" {
                if let state = frame["state"] as? [String: [String: Any]] { present = state }
                for (id, entry) in frame["joins"] as? [String: [String: Any]] ?? [:] { present[id] = entry }
                for id in frame["leaves"] as? [String] ?? [] { present[id] = nil }
            }
            return present
        }

        /// The names present, sorted, each with its role (`"Ann (member)"`).
        var names: [String] {
            present.values.map { "\($0["name"] as? String ?? "?") (\($0["role"] as? String ?? "?"))" }.sorted()
        }

        func close() {
            connection.transportClosed()
            reader.cancel()
        }
    }

    @Test("a viewer's board leaves out who added each item; a member's shows it; a viewer's command is refused")
    func viewerDoesNotSeeWhoAdded() async throws {
        try await Self.withBoard { hub in
            let ann = Self.client(hub, token: Self.memberToken, name: "Ann")
            let vic = Self.client(hub, token: Self.viewerToken, name: "Vic")
            #expect(try await ann.send(.add(text: "milk")) == .applied(version: 1))
            #expect(try await vic.send(.add(text: "sneaked in")) == .rejected("viewers cannot change the board"))
            #expect(try await vic.send(.toggle(id: "i1")) == .rejected("viewers cannot change the board"))
            let annSees = try #require(try await ann.view.firstValue(where: { $0?.items.count == 2 }) ?? nil)
            let vicSees = try #require(try await vic.view.firstValue(where: { $0?.items.count == 2 }) ?? nil)
            #expect(annSees.items.map(\.addedBy) == [nil, "Ann"])
            #expect(vicSees.items.map(\.addedBy) == [nil, nil])
            #expect(vicSees.items.map(\.text) == annSees.items.map(\.text))
            #expect(vicSees.items.map(\.done) == [false, false])
            // What the server would send a new viewer holds no name at all.
            let encoded = String(decoding: try JSONEncoder().encode(hub.view(for: .viewer).items), as: UTF8.self)
            #expect(!encoded.contains("addedBy") && !encoded.contains("Ann"))
            #expect(String(decoding: try JSONEncoder().encode(hub.view(for: .member).items), as: UTF8.self).contains(#""addedBy":"Ann""#))
            await ann.close()
            await vic.close()
        }
    }

    @Test("the welcome names the client and its role; only a member is told the viewer token")
    func welcomeNamesTheRole() async throws {
        try await Self.withBoard { hub in
            let ann = Watcher(hub, token: Self.memberToken, name: "  Ann  ")
            let vic = Watcher(hub, token: Self.viewerToken, name: "")
            defer { ann.close(); vic.close() }
            try await eventually("both welcomes") { ann.you != nil && vic.you != nil }
            #expect(ann.you?["name"] as? String == "Ann")
            #expect(ann.you?["role"] as? String == "member")
            #expect(ann.you?["viewerToken"] as? String == Self.viewerToken)
            #expect(vic.you?["name"] as? String == "Viewer")
            #expect(vic.you?["role"] as? String == "viewer")
            #expect(vic.you?["viewerToken"] == nil)
        }
    }

    @Test("presence lists a member and a viewer to both, without the viewer token, and drops the one that left")
    func presenceListsBoth() async throws {
        try await Self.withBoard { hub in
            let ann = Watcher(hub, token: Self.memberToken, name: "Ann")
            let vic = Watcher(hub, token: Self.viewerToken, name: "Vic")
            defer { ann.close() }
            try await eventually("both listed on both") { ann.present.count == 2 && vic.present.count == 2 }
            #expect(ann.names == ["Ann (member)", "Vic (viewer)"])
            #expect(vic.names == ann.names)
            #expect(ann.present.values.allSatisfy { $0["viewerToken"] == nil })
            vic.close()
            try await eventually("Vic leaving Ann's list") { ann.present.count == 1 }
            #expect(ann.names == ["Ann (member)"])
        }
    }

    @Test("a viewer token opens only its own team's board, and a replaced team token replaces it")
    func viewerTokens() async throws {
        let digests = ["alpha": LiveTokens.digest(of: Self.memberToken), "beta": LiveTokens.digest(of: "beta-secret-token")]
        let access = LiveTokenTable(digests: digests)
        let viewers = LiveTokenTable(digests: ViewerTokens.digests(forMemberDigests: digests))
        func role(_ token: String, team: String) async -> BoardRole? {
            let service = BoardService(team: team, access: access, viewers: viewers)
            if case .accepted(let user) = await service.authenticate(LiveHandshake(token: token)) { return user.role }
            return nil
        }
        #expect(await role(Self.memberToken, team: "alpha") == .member)
        #expect(await role(Self.viewerToken, team: "alpha") == .viewer)
        #expect(await role(Self.viewerToken, team: "beta") == nil)
        #expect(await role(ViewerTokens.token(forMemberToken: "beta-secret-token"), team: "beta") == .viewer)
        #expect(Self.viewerToken != ViewerTokens.token(forMemberToken: "beta-secret-token"))
        let replaced = ["alpha": LiveTokens.digest(of: "a-new-alpha-token-0001"), "beta": digests["beta"]!]
        access.replaceDigests(replaced)
        viewers.replaceDigests(ViewerTokens.digests(forMemberDigests: replaced))
        #expect(await role(Self.viewerToken, team: "alpha") == nil)
        #expect(await role(ViewerTokens.token(forMemberToken: "a-new-alpha-token-0001"), team: "alpha") == .viewer)
    }
}
