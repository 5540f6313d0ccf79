import Foundation
import HummingbirdWSClient
import NIOWebSocket
import LiveServerCore
import Stillwater
import StillwaterTesting
import Testing

@Suite("Live server over real WebSockets")
struct LiveServerTests {
    @Test("a client gets the snapshot of its team's board first")
    func snapshotFirst() async throws {
        try await withServer { server, port in
            let client = try await BoardClient.connected(port: port, team: "alpha")
            let first = client.log.withLock { $0.frames.first }
            let board = server.teams["alpha"]!
            #expect(first == .snapshot(board.store.state.value.view, board: board.id))
            #expect(client.view?.title == "Team Alpha")
            #expect(client.view?.items.count == 4)
            await client.close()
        }
    }

    @Test("the page is served at /")
    func page() async throws {
        try await withServer { _, port in
            let (status, body) = try await httpGet(port: port, path: "/")
            #expect(status == 200)
            #expect(body.contains("function applyListPatch"))
            #expect(body.contains("/ws?team="))
        }
    }

    @Test("several clients sending seeded random actions at once all end with the server's board",
          arguments: [UInt64(1), 2, 3])
    func randomActionsConverge(seed: UInt64) async throws {
        try await withServer { server, port in
            var clients: [BoardClient] = []
            for _ in 0..<4 { clients.append(try await BoardClient.connected(port: port, team: "alpha")) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (number, client) in clients.enumerated() {
                    group.addTask {
                        var random = SeededRandom(seed: seed &* 1_000 &+ UInt64(number))
                        for step in 0..<60 {
                            try await client.perform(randomCommand(step: step, client: number,
                                                                   view: client.view!, using: &random))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let board = server.teams["alpha"]!
            let final = board.store.state.value.view
            #expect(final.version > 0)
            for client in clients {
                try await eventually("the client reached version \(final.version) (\(client.log.withLock { $0.replicaFailure ?? "no failure" }))") {
                    client.view?.version == final.version
                }
                #expect(client.view == final)
                #expect(client.log.withLock { $0.replicaFailure } == nil)
                // Every frame after the snapshot was a patch, ack or error: never a second snapshot.
                #expect(client.log.withLock { $0.count { if case .snapshot = $0 { true } else { false } } } == 1)
            }
            // Patches carry only what changed: no patch is as large as the state it leads to.
            let stats = server.stats.snapshot()
            #expect(stats["patches"]! > 0)
            #expect(stats["patchBytes"]! < stats["wholeStateBytes"]!)
            for client in clients { await client.close() }
            try await eventually("the connections were released") { server.stats.connections.load(ordering: .relaxed) == 0 }
        }
    }

    @Test("bad frames get an error frame each and change nothing")
    func badFrames() async throws {
        try await withServer { server, port in
            let client = try await BoardClient.connected(port: port, team: "alpha")
            let watcher = try await BoardClient.connected(port: port, team: "alpha")
            let store = server.teams["alpha"]!.store
            let before = store.state.value
            let id = before.items[0].id
            let bad = [
                "not json",
                "[]",
                "{}",
                #"{"type":"explode"}"#,
                #"{"type":"add"}"#,
                #"{"type":"add","text":""}"#,
                #"{"type":"add","text":"   "}"#,
                #"{"type":"add","text":42}"#,
                #"{"type":"add","text":"\#(String(repeating: "x", count: Limits.itemText + 1))"}"#,
                #"{"type":"add","text":"\#(String(repeating: "y", count: Limits.frame))"}"#,
                #"{"type":"toggle"}"#,
                #"{"type":"toggle","id":"nope"}"#,
                #"{"type":"delete","id":"i999"}"#,
                #"{"type":"rename","id":"\#(id)","text":""}"#,
                #"{"type":"rename","id":"i999","text":"ok"}"#,
                #"{"type":"move","id":"\#(id)","to":99}"#,
                #"{"type":"move","id":"\#(id)","to":-1}"#,
                #"{"type":"move","id":"\#(id)","to":1.5}"#,
                #"{"type":"setTitle","title":"\#(String(repeating: "t", count: Limits.title + 1))"}"#,
                #"{"type":"setTitle","title":null}"#,
            ]
            for text in bad { client.send(text: text) }
            client.send(binary: [1, 2, 3])
            try await eventually("an error frame per bad frame") {
                client.log.withLock { $0.errors.count } == bad.count + 1
            }
            #expect(store.state.value == before)
            // Still connected and served: a good frame after the bad ones works and reaches both clients.
            let reply = try await client.perform(.add(text: "after the bad frames"))
            guard case .ack(_, let version, _) = reply else { Issue.record("no ack: \(reply)"); return }
            try await eventually("both replicas have the new item") {
                client.view?.version == version && watcher.view?.version == version
            }
            #expect(watcher.view == store.state.value.view)
            // The watcher saw no error frames and exactly one patch: the bad frames sent it nothing.
            #expect(watcher.log.withLock { $0.errors }.isEmpty)
            #expect(watcher.log.withLock { $0.count { if case .patch = $0 { true } else { false } } } == 1)
            await client.close()
            await watcher.close()
        }
    }

    @Test("a frame over the WebSocket limit closes that connection only, and changes nothing")
    func hugeFrame() async throws {
        try await withServer { server, port in
            let client = try await BoardClient.connected(port: port, team: "alpha")
            let other = try await BoardClient.connected(port: port, team: "alpha")
            let before = server.teams["alpha"]!.store.state.value
            client.send(text: #"{"type":"add","text":"\#(String(repeating: "z", count: Limits.frameLimit + 1))"}"#)
            try await eventually("the connection closed") { client.log.withLock { $0.closed } }
            #expect(client.log.withLock { $0.closeCode } == .messageTooLarge)
            #expect(server.teams["alpha"]!.store.state.value == before)
            // The other client is still served.
            try await other.perform(.toggle(id: "i1"))
            try await eventually("the toggle arrived") { other.view?.items.first?.done == true }
            await client.close()
            await other.close()
        }
    }

    @Test("a command that changes nothing a client sees sends no patch (deduplicated), a real change one")
    func deduplicated() async throws {
        try await withServer { server, port in
            let client = try await BoardClient.connected(port: port, team: "alpha")
            let watcher = try await BoardClient.connected(port: port, team: "alpha")
            let before = server.teams["alpha"]!.store.state.value
            let first = before.items[0]
            #expect(try await client.perform(.rename(id: first.id, text: first.text)) == .ack(ref: 1, version: 0))
            #expect(try await client.perform(.move(id: first.id, to: 0)) == .ack(ref: 2, version: 0))
            #expect(try await client.perform(.setTitle(before.title)) == .ack(ref: 3, version: 0))
            #expect(try await client.perform(.toggle(id: first.id)) == .ack(ref: 4, version: 1))
            try await eventually("the watcher has version 1") { watcher.view?.version == 1 }
            let frames = watcher.log.withLock { $0.frames }
            #expect(frames.count == 2)
            guard case .patch(0, 1, nil, let items?) = frames.last else {
                Issue.record("expected one items patch, got \(frames)")
                return
            }
            // One update, with the toggled item's new content only.
            #expect(items.changeset == Changeset(updates: [0]))
            #expect(items.elements == [BoardItem(id: first.id, text: first.text, done: true)])
            await client.close()
            await watcher.close()
        }
    }

    @Test("a client of one team never receives another team's board, nor changes it")
    func teamIsolation() async throws {
        try await withServer { server, port in
            let alpha = try await BoardClient.connected(port: port, team: "alpha")
            let beta = try await BoardClient.connected(port: port, team: "beta")
            let betaBefore = server.teams["beta"]!.store.state.value
            // Alpha acts on its own items and tries beta's ids (beta's board has i1 and i2 too: ids are
            // per board, so they name alpha's items here, never beta's).
            try await alpha.perform(.add(text: "alpha secret plan"))
            try await alpha.perform(.setTitle("Alpha only"))
            try await alpha.perform(.rename(id: "i1", text: "renamed by alpha"))
            try await alpha.perform(.delete(id: "i2"))
            let alphaVersion = server.teams["alpha"]!.store.state.value.version
            try await eventually("alpha's replica caught up") { alpha.view?.version == alphaVersion }
            #expect(server.teams["beta"]!.store.state.value == betaBefore)
            let betaFrames = beta.log.withLock { $0.rawFrames }
            #expect(betaFrames.count == 1)
            for frame in betaFrames {
                #expect(!frame.contains("alpha") && !frame.contains("Alpha"))
            }
            #expect(beta.view == betaBefore.view)
            await alpha.close()
            await beta.close()
        }
    }

    @Test("a closed socket ends its subscription (the send loop is cancelled with the connection)")
    func closingEndsTheSubscription() async throws {
        try await withServer { server, port in
            let client = try await BoardClient.connected(port: port, team: "alpha")
            #expect(server.stats.connections.load(ordering: .relaxed) == 1)
            await client.close()
            try await eventually("the connection was released") { server.stats.connections.load(ordering: .relaxed) == 0 }
            // The board still works for others after the first client left.
            let other = try await BoardClient.connected(port: port, team: "alpha")
            try await other.perform(.toggle(id: "i1"))
            try await eventually("the toggle arrived") { other.view?.items.first?.done == true }
            await other.close()
        }
    }
}

/// A random command for a client whose replica shows `view`; ids come from the replica (so they may be
/// stale when another client deleted the item meanwhile, which the server must refuse cleanly).
func randomCommand(step: Int, client: Int, view: BoardView, using random: inout SeededRandom) -> BoardCommand {
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
