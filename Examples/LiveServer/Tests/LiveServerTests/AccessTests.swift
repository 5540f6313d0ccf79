import Foundation
import HTTPTypes
import LiveServerCore
import NIOWebSocket
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

@Suite("Access: tokens and origins")
struct AccessTests {
    @Test("a wrong, missing or other team's token is refused after the hello: unauthorized, close 4401, nothing changes",
          arguments: ["wrong-token-0000000", "beta-token-for-tests", nil] as [String?])
    func wrongToken(token: String?) async throws {
        try await withServer { server, port in
            let before = server.hub("alpha").view
            let refused = RawClient(port: port, path: "/live?team=alpha", first: [helloFrame(token: token), commandFrame(.add(text: "x"), ref: 1)])
            let log = try await refused.closedLog()
            #expect(log.closeCode == WebSocketErrorCode(codeNumber: 4401))
            #expect(log.texts.map(object).map { $0["code"] as? String } == ["unauthorized"])
            #expect(server.hub("alpha").view == before)
        }
    }

    @Test("an unknown or missing team is refused after the hello as for a wrong token", arguments: ["/live?team=nobody", "/live"])
    func unknownTeam(path: String) async throws {
        try await withServer { _, port in
            let client = RawClient(port: port, path: path, first: [helloFrame(token: seededTokens["alpha"])])
            let log = try await client.closedLog()
            #expect(log.closeCode == WebSocketErrorCode(codeNumber: 4401))
            #expect(log.texts.map(object).map { $0["code"] as? String } == ["unauthorized"])
        }
    }

    @Test("the team may be named in the hello's params instead of the URL")
    func teamInHello() async throws {
        try await withServer { _, port in
            let client = RawClient(port: port, path: "/live", first: [helloFrame(token: seededTokens["beta"], team: "beta")])
            try await client.wait(for: "beta's snapshot") { frames($0, ofType: "snapshot").count == 1 }
            let view = try #require(frames(client.frames, ofType: "snapshot").first?["view"] as? [String: Any])
            #expect(view["title"] as? String == "Team Beta")
            await client.close()
        }
    }

    @Test("a page from a foreign origin is refused with 403 at the upgrade even with the right token; the server's own origin is not")
    func foreignOrigin() async throws {
        try await withServer(origins: ["https://proxy.example"]) { _, port in
            for origin in ["http://evil.example", "http://127.0.0.1:\(port + 1)", "null", "https://127.0.0.1:\(port).evil.example"] {
                let response = try await httpRequest(port: port, upgradeRequest(port: port, path: "/live?team=alpha", headers: ["Origin": origin]))
                #expect(response.status == 403, "\(origin)")
                #expect(response.body.contains("origin"))
            }
            for origin in ["http://127.0.0.1:\(port)", "https://proxy.example"] {
                let own = try await httpRequest(port: port, upgradeRequest(port: port, path: "/live?team=alpha", headers: ["Origin": origin]))
                #expect(own.status == 101, "\(origin)")
            }
        }
    }

    @Test("the token in the upgrade's Authorization header opens the board, its scheme in any case",
          arguments: ["bearer", "BEARER", "Bearer"])
    func bearerInAnyCase(scheme: String) async throws {
        try await withServer { _, port in
            let client = RawClient(
                port: port, path: "/live?team=alpha", headers: [.authorization: "\(scheme) alpha-token-for-tests"],
                first: [helloFrame(token: nil)])
            try await client.wait(for: "the snapshot") { frames($0, ofType: "snapshot").count == 1 }
            await client.close()
        }
    }

    @Test("a connection that sends nothing at all is closed after the first-request timeout; one that sent a request is not")
    func firstRequestTimeout() async throws {
        try await withServer(firstRequestTimeout: .milliseconds(300)) { _, port in
            let silent = try RawConnection(port: port)
            let started = ContinuousClock.now
            #expect(try await onOwnThread { silent.isClosedByServer(within: 10) })
            #expect(ContinuousClock.now - started < .seconds(5))
            // A WebSocket that is served stays open past the timeout.
            let client = try await connectedClient(port: port)
            try await Task.sleep(for: .milliseconds(600))
            #expect(client.status.value == .live)
            await client.close()
        }
    }

    @Test("a client that sends nothing after the upgrade is told hello_timeout and closed with 4408")
    func helloTimeout() async throws {
        try await withServer(helloTimeout: .milliseconds(300)) { _, port in
            let silent = RawClient(port: port, path: "/live?team=alpha")
            let log = try await silent.closedLog()
            #expect(log.texts.map(object).map { $0["code"] as? String } == ["hello_timeout"])
            #expect(log.closeCode == WebSocketErrorCode(codeNumber: 4408))
        }
    }

    @Test("a reconnecting client is sent a patch from the version it has, or a snapshot for another stream")
    func resume() async throws {
        try await withServer { server, port in
            let hub = server.hub("alpha")
            let had = hub.version
            let writer = try await connectedClient(port: port)
            _ = try await writer.send(.add(text: "while away"))
            _ = try await writer.send(.toggle(id: "i1"))
            let back = RawClient(port: port, path: "/live?team=alpha",
                                 first: [helloFrame(token: seededTokens["alpha"], resume: (hub.stream, had))])
            try await back.wait(for: "the resumed client's view") { $0.count >= 2 }
            #expect(back.frames[1]["type"] as? String == "patch")
            #expect(back.frames[1]["from"] as? Int == had)
            #expect(back.frames[1]["version"] as? Int == hub.version)
            let stranger = RawClient(port: port, path: "/live?team=alpha",
                                     first: [helloFrame(token: seededTokens["alpha"], resume: ("s-0000000000000000", had))])
            try await stranger.wait(for: "the stranger's view") { $0.count >= 2 }
            #expect(stranger.frames[1]["type"] as? String == "snapshot")
            await back.close()
            await stranger.close()
            await writer.close()
        }
    }

    @Test("a command sent twice with one cid is applied once; the retry is acknowledged as a duplicate")
    func duplicateCommand() async throws {
        try await withServer { server, port in
            let client = RawClient(port: port, team: "alpha")
            let count = server.hub("alpha").view.items.count
            client.send(commandFrame(.add(text: "once"), ref: 1, cid: "retry-me-1"))
            client.send(commandFrame(.add(text: "once"), ref: 2, cid: "retry-me-1"))
            try await client.wait(for: "both acks") { frames($0, ofType: "ack").count == 2 }
            let acks = frames(client.frames, ofType: "ack")
            #expect(acks[0]["version"] as? Int == acks[1]["version"] as? Int)
            #expect(acks[0]["duplicate"] == nil && acks[1]["duplicate"] as? Bool == true)
            #expect(server.hub("alpha").view.items.count == count + 1)
            await client.close()
        }
    }
}
