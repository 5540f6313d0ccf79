import Foundation
import LiveServerCore
import NIOWebSocket
import Stillwater
import StillwaterLive
import StillwaterTesting
import Testing

@Suite("Live server over real WebSockets")
struct LiveServerTests {
    @Test("a client gets a welcome, then the snapshot of its team's board")
    func snapshotFirst() async throws {
        try await withServer { server, port in
            let client = RawClient(port: port, team: "alpha")
            try await client.wait(for: "the snapshot") { $0.count >= 2 }
            let frames = client.frames
            #expect(frames[0]["type"] as? String == "welcome")
            #expect(frames[1]["type"] as? String == "snapshot")
            #expect(frames[1]["stream"] as? String == server.hub("alpha").stream)
            let view = try #require(frames[1]["view"] as? [String: Any])
            #expect(view["title"] as? String == "Team Alpha")
            #expect((view["items"] as? [Any])?.count == 4)
            await client.close()
        }
    }

    @Test("the page is served at / with its security policy, and the JavaScript client beside it")
    func page() async throws {
        try await withServer(origins: ["http://node2:8082"]) { _, port in
            let page = try await httpRequest(port: port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            #expect(page.status == 200)
            #expect(page.body.contains("<html") || page.body.contains("<!doctype") || page.body.contains("<!DOCTYPE"))
            let script = try await httpGet(port: port, path: "/stillwater-live.js")
            #expect(script.status == 200)
            #expect(!script.body.isEmpty)
        }
        #expect(BoardServer(hubs: [:]).endpoint.contentSecurityPolicy.contains("connect-src 'self';"))
        #expect(BoardServer(hubs: [:], origins: ["http://node2:8082", "HTTPS://Board.example"]).endpoint.contentSecurityPolicy
            .contains("connect-src 'self' ws://node2:8082 wss://board.example;"))
    }

    @Test("several clients sending seeded random commands at once all end with the server's view",
          arguments: [UInt64(1), 2, 3])
    func randomCommandsConverge(seed: UInt64) async throws {
        try await withServer { server, port in
            var clients: [LiveClient<LiveBoardView, BoardCommand>] = []
            for _ in 0..<4 { clients.append(try await connectedClient(port: port)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (number, client) in clients.enumerated() {
                    group.addTask {
                        var random = SeededRandom(seed: seed &* 1_000 &+ UInt64(number))
                        for step in 0..<40 {
                            _ = try await client.send(randomCommand(step: step, client: number, view: client.view.value!, using: &random))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let hub = server.hub("alpha")
            #expect(hub.version > 0)
            for client in clients {
                try await eventually("the client reached the server's view") { client.view.value == hub.view }
            }
            for client in clients { await client.close() }
        }
    }

    @Test("bad frames get an error frame each with their code and change nothing; the connection stays served")
    func badFrames() async throws {
        try await withServer { server, port in
            let client = RawClient(port: port, team: "alpha")
            try await client.wait(for: "the snapshot") { $0.count >= 2 }
            let hub = server.hub("alpha")
            let before = hub.view
            let id = before.items[0].id
            let bad: [(String, String)] = [
                ("not json", "malformed"),
                ("[]", "malformed"),
                (#"{"type":"explode"}"#, "unknown_type"),
                (#"{"type":"command","ref":1,"command":{"add":{}}}"#, "bad_command"),
                (#"{"type":"command","ref":2,"command":{"add":{"text":""}}}"#, "rejected"),
                (#"{"type":"command","ref":3,"command":{"add":{"text":"   "}}}"#, "rejected"),
                (#"{"type":"command","ref":4,"command":{"add":{"text":42}}}"#, "bad_command"),
                (commandFrame(.add(text: String(repeating: "x", count: Limits.itemText + 1)), ref: 5), "rejected"),
                (commandFrame(.add(text: String(repeating: "y", count: Limits.frame)), ref: 6), "too_large"),
                (commandFrame(.toggle(id: "nope"), ref: 7), "rejected"),
                (commandFrame(.rename(id: id, text: ""), ref: 8), "rejected"),
                (commandFrame(.move(id: id, to: 99), ref: 9), "rejected"),
                (commandFrame(.move(id: id, to: -1), ref: 10), "rejected"),
                (#"{"type":"command","ref":11,"command":{"move":{"id":"i1","to":1.5}}}"#, "bad_command"),
                (commandFrame(.setTitle(String(repeating: "t", count: Limits.title + 1)), ref: 12), "rejected"),
            ]
            for (text, _) in bad { client.send(text) }
            client.send(binary: [1, 2, 3])
            try await client.wait(for: "an error frame per bad frame") { frames($0, ofType: "error").count == bad.count + 1 }
            let codes = frames(client.frames, ofType: "error").compactMap { $0["code"] as? String }
            // A refusal is answered once the command was decided, after the frames refused at once.
            #expect(codes.sorted() == (bad.map(\.1) + ["binary"]).sorted())
            #expect(hub.view == before)
            // Still connected and served: a good command after the bad ones is acknowledged and patched.
            client.send(commandFrame(.add(text: "after the bad frames"), ref: 99))
            try await client.wait(for: "the ack and the patch") { frames($0, ofType: "patch").count == 1 && frames($0, ofType: "ack").count == 1 }
            #expect(hub.view.items.last?.text == "after the bad frames")
            await client.close()
        }
    }

    @Test("a frame over the WebSocket limit closes that connection only (1009), and changes nothing")
    func hugeFrame() async throws {
        try await withServer { server, port in
            let client = RawClient(port: port, team: "alpha")
            let other = try await connectedClient(port: port)
            try await client.wait(for: "the snapshot") { $0.count >= 2 }
            let before = server.hub("alpha").view
            client.send(commandFrame(.add(text: String(repeating: "z", count: Limits.frameLimit + 1)), ref: 1))
            #expect(try await client.closedLog().closeCode == .messageTooLarge)
            #expect(server.hub("alpha").view == before)
            // The other client is still served.
            #expect(try await other.send(.toggle(id: "i1")) == .applied(version: 1))
            try await eventually("the toggle arrived") { other.view.value?.items.first?.done == true }
            await other.close()
        }
    }

    @Test("a command that changes nothing a client sees sends a patch with no members; a real change only what changed")
    func emptyPatches() async throws {
        try await withServer { server, port in
            let client = try await connectedClient(port: port)
            let watcher = RawClient(port: port, team: "alpha")
            try await watcher.wait(for: "the snapshot") { $0.count >= 2 }
            let first = server.hub("alpha").view.items[0]
            #expect(try await client.send(.rename(id: first.id, text: first.text)) == .applied(version: 1))
            try await watcher.wait(for: "the first patch") { frames($0, ofType: "patch").count == 1 }
            #expect(try await client.send(.toggle(id: first.id)) == .applied(version: 2))
            try await watcher.wait(for: "the second patch") { frames($0, ofType: "patch").last?["version"] as? Int == 2 }
            let patches = frames(watcher.frames, ofType: "patch")
            #expect(patches[0]["set"] == nil && patches[0]["lists"] == nil)
            let items = try #require((patches.last?["lists"] as? [String: Any])?["items"] as? [String: Any])
            #expect((items["changes"] as? [String: Any])?.keys.sorted() == ["updates"])
            #expect((items["elements"] as? [[String: Any]])?.first?["done"] as? Bool == true)
            #expect(patches.last?["set"] == nil)
            await client.close()
            await watcher.close()
        }
    }

    @Test("a client of one team never receives another team's board, nor changes it")
    func teamIsolation() async throws {
        try await withServer { server, port in
            let alpha = try await connectedClient(port: port, team: "alpha")
            let beta = RawClient(port: port, team: "beta")
            try await beta.wait(for: "beta's snapshot") { $0.count >= 2 }
            let betaBefore = server.hub("beta").view
            // Beta's board has i1 and i2 too: ids are per board, so they name alpha's items here.
            _ = try await alpha.send(.add(text: "alpha secret plan"))
            _ = try await alpha.send(.setTitle("Alpha only"))
            _ = try await alpha.send(.rename(id: "i1", text: "renamed by alpha"))
            _ = try await alpha.send(.delete(id: "i2"))
            try await eventually("alpha's copy caught up") { alpha.view.value == server.hub("alpha").view }
            try await Task.sleep(for: .milliseconds(100))
            #expect(server.hub("beta").view == betaBefore)
            let betaFrames = beta.log.withLock { $0.texts }
            // The welcome and the snapshot, and presence frames naming no one of alpha's.
            #expect(betaFrames.filter { !isPresence($0) }.count == 2)
            #expect(betaFrames.allSatisfy { !$0.contains("alpha") && !$0.contains("Alpha") })
            await alpha.close()
            await beta.close()
        }
    }

    @Test("a client that closed its socket leaves the board working for the others")
    func closingClient() async throws {
        try await withServer { _, port in
            let client = try await connectedClient(port: port)
            await client.close()
            let other = try await connectedClient(port: port)
            #expect(try await other.send(.toggle(id: "i1")) == .applied(version: 1))
            try await eventually("the toggle arrived") { other.view.value?.items.first?.done == true }
            await other.close()
        }
    }
}

/// A random command for a client whose copy shows `view`; ids come from the copy (so they may be
/// stale when another client deleted the item meanwhile, which the server must refuse cleanly).
func randomCommand(step: Int, client: Int, view: LiveBoardView, using random: inout SeededRandom) -> BoardCommand {
    let items = view.items
    let roll = Int.random(in: 0..<100, using: &random)
    guard let item = items.randomElement(using: &random) else { return .add(text: "c\(client) s\(step)") }
    switch roll {
    case 0..<25: return .add(text: "c\(client) s\(step)")
    case 25..<45: return .toggle(id: item.id)
    case 45..<60: return .rename(id: item.id, text: "c\(client) r\(step)")
    case 60..<80: return .move(id: item.id, to: Int.random(in: 0..<items.count, using: &random))
    case 80..<92: return .delete(id: item.id)
    case 92..<97: return .setTitle("Title \(client).\(step)")
    default: return .toggle(id: "gone\(step)")
    }
}
