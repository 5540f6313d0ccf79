#if Hummingbird
import Foundation
import Hummingbird
import NIOWebSocket
import ServiceLifecycle
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

@Suite("LiveEndpoint over real WebSockets", .timeLimit(.minutes(5)))
struct LiveEndpointTests {
    @Test("frames queued together go out in one write each batch: every one arrives, whole and in order")
    func batchedFramesInOrder() async throws {
        let hub = try await counterHub()
        let live = LiveEndpoint(path: "/live", hub: hub)
        try await withServer(live) { served in
            let client = try await LiveTestClient.admitted(port: served.port)
            let watcher = try await LiveTestClient.admitted(port: served.port)
            // Sent faster than the socket's writer takes them: the pongs queue and go out in batches.
            for ref in 1...40 { client.send(#"{"type":"ping","ref":\#(ref)}"#) }
            client.send(#"{"type":"command","ref":41,"command":2}"#)
            try await eventually("the pongs, the ack and the patch") { client.frames.count >= 44 && watcher.frames.count >= 3 }
            let pongs = client.frames[2..<42]
            #expect(pongs.map { members($0)["ref"] as? Int } == Array(1...40))
            #expect(pongs.allSatisfy { type(of: $0) == "pong" })
            #expect(client.frames[42] == #"{"type":"ack","ref":41,"version":1}"#)
            // The patch both clients got is the hub's one frame, written from the same buffer.
            #expect(client.frames[43] == #"{"type":"patch","from":0,"version":1,"set":{"count":2}}"#)
            #expect(watcher.frames[2] == client.frames[43])
            await client.close()
            await watcher.close()
        }
    }

    @Test("a counter mounted in a few lines: hello, welcome, snapshot, command, ack and patch to every client")
    func mountedCounter() async throws {
        // What a user writes (see withServer for the router, application and service group).
        let hub = try await counterHub()
        let live = LiveEndpoint(path: "/live", hub: hub)
        try await withServer(live) { served in
            let client = try await LiveTestClient.admitted(port: served.port)
            let watcher = try await LiveTestClient.admitted(port: served.port)
            #expect(client.frames.map { type(of: $0) } == ["welcome", "snapshot"])
            #expect(members(client.frames[1])["view"] as? [String: Int] == ["count": 0])
            client.send(#"{"type":"command","ref":1,"cid":"add-three","command":3}"#)
            try await eventually("the ack and the patch") { client.frames.count >= 4 && watcher.frames.count >= 3 }
            #expect(client.frames[2] == #"{"type":"ack","ref":1,"cid":"add-three","version":1}"#)
            #expect(client.frames[3] == #"{"type":"patch","from":0,"version":1,"set":{"count":3}}"#)
            #expect(watcher.frames[2] == client.frames[3])
            #expect(hub.view.count == 3)
            // A refused command changes nothing and is answered on the same socket.
            client.send(#"{"type":"command","ref":2,"command":-1}"#)
            try await eventually("the refusal") { client.frames.count >= 5 }
            #expect(members(client.frames[4])["code"] as? String == "rejected")
            #expect(hub.view.count == 3)
            await client.close()
            await watcher.close()
        }
    }

    @Test("a wrong or missing token gets an unauthorized error frame and close 4401, and changes nothing",
          arguments: ["not-the-token", nil])
    func wrongToken(token: String?) async throws {
        let hub = try await counterHub()
        try await withServer(LiveEndpoint(hub: hub)) { served in
            let client = LiveTestClient(port: served.port, first: [hello(token: token), #"{"type":"command","command":5}"#])
            try await eventually("the refusal closed the connection") { client.closed }
            #expect(client.frames.count == 1)
            #expect(members(client.frames[0])["code"] as? String == "unauthorized")
            #expect(client.closeCode == WebSocketErrorCode(codeNumber: 4401))
            #expect(hub.view.count == 0)
        }
    }

    @Test("the token may come in the upgrade's Authorization header instead of the hello")
    func bearerHeader() async throws {
        try await withServer(LiveEndpoint(hub: try await counterHub())) { served in
            let client = LiveTestClient(port: served.port, headers: [.authorization: "Bearer \(CounterService.token)"],
                                        first: [hello(token: nil)])
            try await eventually("the snapshot") { client.frames.count >= 2 }
            #expect(type(of: client.frames[1]) == "snapshot")
            await client.close()
        }
    }

    @Test("several hubs: each client gets the hub its hello names; no hub is refused as a wrong token is")
    func severalHubs() async throws {
        let alpha = try await counterHub(), beta = try await counterHub()
        _ = await beta.perform(7, as: "server")
        let live = LiveEndpoint(path: "/ws", hubs: ["alpha": alpha]) { $0.params["team"] ?? $0.query["team"] }
        live.add(beta, as: "beta")
        try await withServer(live) { served in
            let a = LiveTestClient(port: served.port, path: "/ws", first: [hello(token: CounterService.token, params: ["team": "alpha"])])
            let b = LiveTestClient(port: served.port, path: "/ws?team=beta", first: [hello(token: CounterService.token)])
            let none = LiveTestClient(port: served.port, path: "/ws", first: [hello(token: CounterService.token, params: ["team": "gamma"])])
            try await eventually("both snapshots and the refusal") { a.frames.count >= 2 && b.frames.count >= 2 && none.closed }
            #expect(members(a.frames[1])["view"] as? [String: Int] == ["count": 0])
            #expect(members(b.frames[1])["view"] as? [String: Int] == ["count": 7])
            #expect(none.frames.map { members($0)["code"] as? String } == ["unauthorized"])
            #expect(none.closeCode == WebSocketErrorCode(codeNumber: 4401))
            await a.close()
            await b.close()
        }
    }

    @Test("rooms on demand: a room opens on its first join, is ticked, closes once idle, and opens again with its state; a room that cannot open is refused")
    func roomsOnDemand() async throws {
        let logs = ["alpha": MemoryJournal<LiveLogState<Counter>, LiveEntry<Add>>()]
        let rooms = LiveRooms<CounterService>(idleTimeout: .milliseconds(200)) { room in
            guard let log = logs[room] else { throw LiveHubError("no room \(room)") }
            return try await LiveHub.open(CounterService(), log: log, initial: Counter())
        }
        let live = LiveEndpoint(path: "/live", rooms: rooms) { $0.params["room"] }
        try await withServer(live) { served in
            let first = try await LiveTestClient.admitted(port: served.port, params: ["room": "alpha"])
            #expect(rooms.openRooms == ["alpha"])
            _ = try await rooms.hub(for: "alpha").perform(5, as: "server")
            try await eventually("the patch from the rooms' tick") { first.frames.count >= 3 }
            #expect(first.frames[2] == #"{"type":"patch","from":0,"version":1,"set":{"count":5}}"#)
            await first.close()
            try await eventually("the idle room closed") { rooms.openRooms.isEmpty }
            let again = try await LiveTestClient.admitted(port: served.port, params: ["room": "alpha"])
            #expect(members(again.frames[1])["view"] as? [String: Int] == ["count": 5])
            let none = LiveTestClient(port: served.port, first: [hello(token: CounterService.token, params: ["room": "beta"])])
            try await eventually("the refusal") { none.closed }
            #expect(none.frames.map { members($0)["code"] as? String } == ["unauthorized"])
            #expect(none.closeCode == WebSocketErrorCode(codeNumber: 4401))
            await again.close()
        }
        #expect(rooms.openRooms.isEmpty)   // the shutdown closed the rooms
    }

    @Test("a hub added while the server runs is ticked: its clients get patches")
    func hubAddedLater() async throws {
        let live = CounterEndpoint(path: "/live") { $0.params["team"] }
        try await withServer(live) { served in
            let gamma = try await counterHub()
            live.add(gamma, as: "gamma")
            #expect(live.hub("gamma") === gamma)
            let client = LiveTestClient(port: served.port, first: [hello(token: CounterService.token, params: ["team": "gamma"])])
            try await eventually("the snapshot") { client.frames.count >= 2 }
            _ = await gamma.perform(2, as: "server")
            try await eventually("the patch") { client.frames.count >= 3 }
            #expect(client.frames[2] == #"{"type":"patch","from":0,"version":1,"set":{"count":2}}"#)
            await client.close()
        }
    }

    @Test("a first frame that is not a hello is a protocol error: an error frame and close 4400")
    func notAHello() async throws {
        try await withServer(LiveEndpoint(hub: try await counterHub())) { served in
            let client = LiveTestClient(port: served.port, first: [#"{"type":"command","command":1}"#])
            try await eventually("the close") { client.closed }
            #expect(client.frames.map { members($0)["code"] as? String } == ["hello_expected"])
            #expect(client.closeCode == WebSocketErrorCode(codeNumber: 4400))
        }
    }

    @Test("an upgraded client that sends no hello is closed with hello_timeout and 4408")
    func helloTimeout() async throws {
        let live = LiveEndpoint(hub: try await counterHub(), configuration: .init(helloTimeout: .milliseconds(200)))
        try await withServer(live) { served in
            let silent = LiveTestClient(port: served.port)
            try await eventually("the close") { silent.closed }
            #expect(silent.frames.map { members($0)["code"] as? String } == ["hello_timeout"])
            #expect(silent.closeCode == WebSocketErrorCode(codeNumber: 4408))
        }
    }
}

@Suite("LiveEndpoint: HTTP, origins, timeouts, shutdown", .timeLimit(.minutes(5)))
struct LiveEndpointHTTPTests {
    @Test("an upgrade from another site's page is refused with 403 and its reason; the server's own page and programs pass")
    func origins() async throws {
        let live = LiveEndpoint(hub: try await counterHub(), configuration: .init(extraOrigins: ["https://Proxy.example"]))
        try await withServer(live) { served in
            let port = served.port
            let refused = try await rawHTTP(port: port, upgradeRequest(port: port, headers: ["Origin": "http://evil.example"]))
            #expect(refused.status == 403)
            #expect(refused.body == "pages from this origin may not use this server\n")
            for origin in [nil, "http://127.0.0.1:\(port)", "https://proxy.example", "ws://tool"] {
                let answer = try await rawHTTP(port: port, upgradeRequest(port: port, headers: origin.map { ["Origin": $0] } ?? [:]))
                #expect(answer.status == 101, "origin \(origin ?? "none")")
            }
            // Another path is not upgraded; a plain GET of the path is told what it expects.
            #expect(try await rawHTTP(port: port, upgradeRequest(port: port, path: "/other")).status == 404)
            #expect(try await rawHTTP(port: port, getRequest(port: port, path: "/live")).status == 426)
            let plainRefused = try await rawHTTP(port: port, getRequest(port: port, path: "/live", headers: ["Origin": "http://evil.example"]))
            #expect(plainRefused.status == 403)
        }
    }

    @Test("the page is served with a policy that lets it open WebSockets to its server and the extra origins only")
    func page() async throws {
        let live = LiveEndpoint(hub: try await counterHub(), configuration: .init(extraOrigins: ["https://Proxy.example", "http://node2:8082"]))
        let policy = live.contentSecurityPolicy
        #expect(policy.contains("connect-src 'self' ws://node2:8082 wss://proxy.example;"))
        #expect(policy.contains("frame-ancestors 'none'"))
        #expect(LiveEndpoint(hub: try await counterHub()).contentSecurityPolicy.contains("connect-src 'self';"))
        let html = "<!doctype html><title>Counter</title><p>live</p>"
        try await withServer(live, page: html) { served in
            let answer = try await rawHTTP(port: served.port, getRequest(port: served.port, path: "/"))
            #expect(answer.status == 200)
            #expect(answer.body == html)
            #expect(answer.headers["content-type"] == "text/html; charset=utf-8")
            #expect(answer.headers["content-security-policy"] == policy)
            #expect(answer.headers["cache-control"] == "no-store")
            #expect(answer.headers["referrer-policy"] == "no-referrer")
        }
    }

    @Test("run(port:) on a port in use fails at once with a LiveListenError naming the address and the reason")
    func portInUse() async throws {
        try await withServer(LiveEndpoint(hub: try await counterHub())) { served in
            let second = LiveEndpoint(hub: try await counterHub())
            let start = ContinuousClock.now
            do {
                try await second.run(port: served.port) { _ in Issue.record("a second server listened on a port in use") }
                Issue.record("run returned on a port in use")
            } catch let error as LiveListenError {
                #expect(error.port == served.port)
                #expect("\(error)".hasPrefix("cannot listen on 127.0.0.1:\(served.port): "), "\(error)")
                #expect(error.reason.lowercased().contains("in use"), "\(error.reason)")
            }
            #expect(ContinuousClock.now - start < .seconds(5))
        }
    }

    @Test("a connection that sends nothing is closed after the first-request timeout; one that sent a request is not")
    func firstRequestTimeout() async throws {
        let live = LiveEndpoint(hub: try await counterHub(), configuration: .init(firstRequestTimeout: .milliseconds(300)))
        try await withServer(live) { served in
            let silent = try await rawHTTP(port: served.port, "")
            #expect(silent.status == nil)
            #expect(silent.elapsed >= .milliseconds(250))
            #expect(silent.elapsed < .seconds(5))
            // A WebSocket that is served stays open past the timeout.
            let client = try await LiveTestClient.admitted(port: served.port)
            try await Task.sleep(for: .milliseconds(500))
            #expect(!client.closed)
            await client.close()
        }
    }

    @Test("a graceful shutdown closes every client with 1001 promptly, after the frames it was owed")
    func gracefulShutdown() async throws {
        let hub = try await counterHub()
        let live = LiveEndpoint(hub: hub)
        try await withServer(live) { served in
            let clients = [try await LiveTestClient.admitted(port: served.port), try await LiveTestClient.admitted(port: served.port)]
            // One more socket, upgraded but without its hello yet: closed by the drain too.
            let waiting = LiveTestClient(port: served.port)
            try await Task.sleep(for: .milliseconds(100))
            let start = ContinuousClock.now
            await served.stop()
            let stopped = ContinuousClock.now - start
            #expect(stopped < .seconds(3), "the shutdown took \(stopped)")
            for client in clients + [waiting] {
                try await eventually(within: 3, "the client was closed") { client.closed }
                #expect(client.closeCode == .goingAway)
            }
            // The hub was closed: a command now is not taken.
            #expect(await hub.perform(1, as: "server") == .unavailable("the server is shutting down"))
        }
    }

    @Test("the JavaScript client is served with its type and a validator, and 304 when unchanged")
    func script() async throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/StillwaterHummingbird/Resources/stillwater-live.js")
        let expected = try String(contentsOf: source, encoding: .utf8)
        try await withServer(LiveEndpoint(hub: try await counterHub())) { served in
            let answer = try await rawHTTP(port: served.port, getRequest(port: served.port, path: "/stillwater-live.js"))
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "text/javascript; charset=utf-8")
            #expect(answer.headers["cache-control"] == "no-cache")
            #expect(answer.body == expected)
            let etag = try #require(answer.headers["etag"])
            let again = try await rawHTTP(port: served.port, getRequest(port: served.port, path: "/stillwater-live.js",
                                                                         headers: ["If-None-Match": etag]))
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
        }
    }
}
#endif
