import Foundation
import LiveServerCore
import NIOWebSocket
import Stillwater
import Testing

@Suite("Access: tokens and origins")
struct AccessTests {
    /// The seeded server with a short hello timeout.
    static func server(helloTimeout: Duration = .seconds(10), firstRequestTimeout: Duration = .seconds(10)) -> LiveServer {
        let seeded = LiveServer.seeded()
        return LiveServer(boards: seeded.teams, access: seeded.access, helloTimeout: helloTimeout,
                          firstRequestTimeout: firstRequestTimeout)
    }

    @Test("a wrong or missing-with-header token is refused at the upgrade with 403, and nothing changes",
          arguments: ["Bearer wrong-token-0000000", "Bearer ", "Basic YWxwaGE6eA==", "Bearer beta-token-for-tests"])
    func wrongHeaderToken(header: String) async throws {
        try await withServer { server, port in
            let before = server.teams["alpha"]!.store.state.value
            let refused = BoardClient(port: port, team: "alpha", auth: .header(String(header.dropFirst(7))))
            try await eventually("the connection ended") { refused.log.withLock { $0.closed } }
            let response = try await httpRequest(
                port: port, upgradeRequest(port: port, path: "/ws?team=alpha", headers: ["Authorization": header]))
            #expect(response.status == 403)
            #expect(response.body.contains("unknown team or wrong token"))
            #expect(refused.log.withLock { $0.rawFrames.isEmpty })
            #expect(server.teams["alpha"]!.store.state.value == before)
            #expect(server.stats.refused.load(ordering: .relaxed) >= 2)
        }
    }

    @Test("an unknown or missing team is refused at the upgrade: no socket, no frame", arguments: ["nobody", "", nil])
    func unknownTeam(team: String?) async throws {
        try await withServer { server, port in
            let client = BoardClient(port: port, team: team, auth: .header("alpha-token-for-tests"))
            try await eventually("the connection ended") { client.log.withLock { $0.closed } }
            let log = client.log.withLock { $0 }
            #expect(log.connectError?.contains("upgrade failed") == true, "\(String(describing: log.connectError))")
            #expect(log.rawFrames.isEmpty)
            #expect(server.stats.connections.load(ordering: .relaxed) == 0)
        }
    }

    @Test("a page from a foreign origin is refused with 403 even with the right token; the server's own origin is not")
    func foreignOrigin() async throws {
        try await withServer { server, port in
            let before = server.teams["alpha"]!.store.state.value
            let token = "Bearer alpha-token-for-tests"
            for origin in ["http://evil.example", "http://127.0.0.1:\(port + 1)", "null", "https://127.0.0.1:\(port).evil.example"] {
                let response = try await httpRequest(port: port, upgradeRequest(
                    port: port, path: "/ws?team=alpha", headers: ["Authorization": token, "Origin": origin]))
                #expect(response.status == 403, "\(origin)")
                #expect(response.body.contains("origin"))
            }
            #expect(server.teams["alpha"]!.store.state.value == before)
            // The page's own origin is let through (101, and the snapshot follows).
            let own = try await httpRequest(port: port, upgradeRequest(
                port: port, path: "/ws?team=alpha", headers: ["Authorization": token, "Origin": "http://127.0.0.1:\(port)"]))
            #expect(own.status == 101)
        }
    }

    @Test("the page may open WebSockets to its own server and to the other nodes named with --origin only")
    func contentSecurityPolicy() {
        let alone = AccessPolicy(tokens: [:]).contentSecurityPolicy
        #expect(alone.contains("connect-src 'self';"))
        let cluster = AccessPolicy(tokens: [:], extraOrigins: ["http://node2:8082", "HTTPS://Board.example"]).contentSecurityPolicy
        #expect(cluster.contains("connect-src 'self' ws://node2:8082 wss://board.example;"))
    }

    @Test("a hello frame with the right token opens the board; a wrong one gets an unauthorized error and close 1008")
    func helloFrame() async throws {
        try await withServer(Self.server()) { server, port in
            let good = BoardClient(port: port, team: "alpha", auth: .hello("alpha-token-for-tests"))
            try await eventually("the snapshot") { good.view != nil }
            let bad = BoardClient(port: port, team: "alpha", auth: .hello("beta-token-for-tests"))
            try await eventually("the refusal closed the connection") { bad.log.withLock { $0.closed } }
            let log = bad.log.withLock { $0 }
            #expect(log.frames == [.error(message: "the token was refused", ref: nil, code: "unauthorized")])
            #expect(log.closeCode == .policyViolation)
            #expect(log.replica.view == nil)
            await good.close()
        }
    }

    @Test("a page naming an unknown team is let through the upgrade and refused at its hello, as for a wrong token")
    func unknownTeamAtHello() async throws {
        try await withServer(Self.server()) { server, port in
            let stranger = BoardClient(port: port, team: "nobody", auth: .hello("alpha-token-for-tests"))
            try await eventually("the refusal closed the connection") { stranger.log.withLock { $0.closed } }
            #expect(stranger.log.withLock { $0.frames } == [.error(message: "the token was refused", ref: nil, code: "unauthorized")])
            #expect(server.stats.connections.load(ordering: .relaxed) == 0)
        }
    }

    @Test("a connection that sends nothing at all is closed after the first-request timeout; one that sent a request is not")
    func firstRequestTimeout() async throws {
        try await withServer(Self.server(firstRequestTimeout: .milliseconds(300))) { server, port in
            let silent = try RawConnection(port: port)
            let started = ContinuousClock.now
            let closed = try await onOwnThread { silent.isClosedByServer(within: 10) }
            #expect(closed)
            #expect(ContinuousClock.now - started < .seconds(5))
            try await eventually("the closed connection left the set") { server.quietConnections.count == 0 }
            // A WebSocket that is served stays open past the timeout.
            let client = try await BoardClient.connected(port: port, team: "alpha")
            try await Task.sleep(for: .milliseconds(600))
            #expect(!client.log.withLock { $0.closed })
            await client.close()
        }
    }

    @Test("a client that sends nothing after the upgrade is closed after the hello timeout, and sent nothing")
    func helloTimeout() async throws {
        try await withServer(Self.server(helloTimeout: .milliseconds(300))) { server, port in
            let silent = BoardClient(port: port, team: "alpha", auth: .none)
            try await eventually(within: 10, "the server closed the silent client") { silent.log.withLock { $0.closed } }
            let log = silent.log.withLock { $0 }
            #expect(log.rawFrames.isEmpty)
            #expect(log.closeCode == .policyViolation)
            #expect(server.stats.connections.load(ordering: .relaxed) == 0)
        }
    }

    @Test("a reconnecting client is sent a patch from the version it has, or a snapshot for another board")
    func resume() async throws {
        try await withServer { server, port in
            let board = server.teams["alpha"]!
            let first = try await BoardClient.connected(port: port, team: "alpha")
            let had = try #require(first.view)
            await first.close()
            let writer = try await BoardClient.connected(port: port, team: "alpha")
            try await writer.perform(.add(text: "while away"))
            try await writer.perform(.toggle(id: "i1"))
            let back = BoardClient(port: port, team: "alpha", resume: (board.id, had.version))
            // The test client's replica has no view to resume from, so the patch is read here from its frames.
            try await eventually("the resumed client's first frame") { back.log.withLock { !$0.frames.isEmpty } }
            let frames = back.log.withLock { $0.frames }
            guard case .patch(let from, let version, _, let items)? = frames.first else {
                Issue.record("expected a patch first, got \(frames)")
                return
            }
            #expect(from == had.version)
            #expect(version == board.store.state.value.version)
            var items0 = had.items
            try items?.apply(to: &items0)
            #expect(items0 == board.store.state.value.items)
            #expect(server.stats.resumes.load(ordering: .relaxed) == 1)
            // A board id that is not this board's: a snapshot.
            let stranger = BoardClient(port: port, team: "alpha", resume: ("b-0000000000000000", had.version))
            try await eventually("the stranger's snapshot") { stranger.view != nil }
            guard case .snapshot? = stranger.log.withLock({ $0.frames.first }) else {
                Issue.record("expected a snapshot")
                return
            }
            await back.close()
            await stranger.close()
            await writer.close()
        }
    }

    @Test("the Authorization header's scheme is case-insensitive: bearer in lower or upper case opens the board",
          arguments: ["bearer", "BEARER", "Bearer"])
    func bearerInAnyCase(scheme: String) async throws {
        try await withServer { _, port in
            let response = try await httpRequest(
                port: port, upgradeRequest(port: port, path: "/ws?team=alpha",
                                           headers: ["Authorization": "\(scheme) alpha-token-for-tests"]))
            #expect(response.status == 101)
        }
    }

    @Test("a command sent twice with one cid is applied once; the retry is acknowledged as a duplicate")
    func duplicateCommand() async throws {
        try await withServer { server, port in
            let client = try await BoardClient.connected(port: port, team: "alpha")
            let count = server.teams["alpha"]!.store.state.value.items.count
            let first = try await client.perform(.add(text: "once"), cid: "retry-me-1")
            let second = try await client.perform(.add(text: "once"), cid: "retry-me-1")
            guard case .ack(_, let version, false) = first, case .ack(_, let again, true) = second else {
                Issue.record("\(first), \(second)")
                return
            }
            #expect(version == again)
            #expect(server.teams["alpha"]!.store.state.value.items.count == count + 1)
            #expect(server.stats.duplicates.load(ordering: .relaxed) == 1)
            await client.close()
        }
    }
}
