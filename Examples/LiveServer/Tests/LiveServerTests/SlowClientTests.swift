import Foundation
import LiveServerCore
import Stillwater
import Synchronization
import Testing

@Suite("A slow client")
struct SlowClientTests {
    @Test("gets the newest board in one patch, holds no queue, and never holds up the store")
    func coalesced() async throws {
        let server = LiveServer.seeded()
        let board = server.teams["alpha"]!
        let sent = Locked<[String]>([])
        // The client's socket: the first frame goes through, the second blocks until the gate opens.
        let gate = AsyncStream.makeStream(of: Void.self)
        let pusher = Task {
            var blocked = false
            try await server.push(board) { text in
                sent.withLock { $0.append(text) }
                if sent.withLock({ $0.count }) == 2 && !blocked {
                    blocked = true
                    for await _ in gate.stream { break }
                }
            }
        }
        try await eventually("the snapshot") { sent.withLock { $0.count } == 1 }
        try await send(board, .toggle(id: "i1"))
        try await eventually("the first patch, now stuck in the slow socket") { sent.withLock { $0.count } == 2 }
        // 200 more changes while the socket is stuck: every dispatch completes (the store does not wait
        // for this client), and nothing is sent meanwhile.
        for step in 0..<200 {
            try await send(board, step.isMultiple(of: 2) ? .add(text: "item \(step)") : .toggle(id: "i2"))
        }
        #expect(board.store.state.value.version == 201)
        #expect(sent.withLock { $0.count } == 2)
        gate.continuation.yield()
        // Once the socket drains, one patch takes the client from version 1 to 201.
        try await eventually("the newest board") {
            sent.withLock { $0.last.flatMap { try? ServerFrame.decode($0) } }.map { frame in
                if case .patch(_, 201, _, _) = frame { true } else { false }
            } ?? false
        }
        let frames = sent.withLock { $0 }.map { try? ServerFrame.decode($0) }
        #expect(frames.count == 3)
        var replica = BoardReplica()
        for frame in frames { try replica.apply(#require(frame)) }
        #expect(replica.view == board.store.state.value.view)
        // 200 views were produced while stuck; one is sent, the one waiting when the gate opened may be
        // superseded or sent, so at least 198 were dropped, and none is queued.
        #expect(server.stats.superseded.load(ordering: .relaxed) >= 198)
        pusher.cancel()
        _ = await pusher.result
    }
}

extension SlowClientTests {
    @Test("with a patch interval, changes within it fold into the next patch")
    func patchInterval() async throws {
        let server = LiveServer.seeded(patchInterval: .seconds(1))
        let board = server.teams["alpha"]!
        let sent = Locked<[ServerFrame]>([])
        let pusher = Task {
            try await server.push(board) { text in
                sent.withLock { $0.append(try! ServerFrame.decode(text)) }
            }
        }
        try await eventually("the snapshot") { sent.withLock { $0.count } == 1 }
        try await send(board, .toggle(id: "i1"))
        try await eventually("the first patch") { sent.withLock { $0.count } == 2 }
        // Sent at once; the next waits out the interval, and the 20 changes made meanwhile come as one.
        for step in 0..<20 { try await send(board, .add(text: "item \(step)")) }
        try await eventually("the folded patch") { sent.withLock { $0.count } == 3 }
        let frames = sent.withLock { $0 }
        guard case .patch(_, 21, nil, let items?) = frames[2] else {
            Issue.record("expected one patch to version 21, got \(frames[2])")
            return
        }
        #expect(items.changeset.inserts.count == 20)
        pusher.cancel()
        _ = await pusher.result
        #expect(sent.withLock { $0.count } == 3)
    }
}

/// Dispatches `command` and fails the test when it is refused.
func send(_ board: TeamBoard, _ command: BoardCommand) async throws {
    let outcome = await board.perform(command)
    guard case .applied = outcome else { throw TestFailure("\(outcome)") }
}
