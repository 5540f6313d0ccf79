import Foundation
import StillwaterLive
import Synchronization
import Testing

/// Counts calls from any thread.
private final class Calls: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// A buffer type an adapter might keep with a frame, told apart by identity.
private final class FakeBuffer: Sendable {
    let bytes: [UInt8]
    init(_ frame: LiveFrame) { bytes = frame.withUTF8 { Array($0) } }
}

@Suite("LiveFrame and batches", .timeLimit(.minutes(5)))
struct LiveFrameTests {
    /// A connection through its hello, and its first batch (the welcome and the snapshot).
    func join(_ hub: BoardHub) async -> (LiveConnection<BoardService>, [LiveFrame]) {
        let connection = hub.connect()
        connection.receive(goodHello)
        guard case .frames(let frames)? = await connection.nextBatch() else {
            Issue.record("no welcome for the connection")
            return (connection, [])
        }
        return (connection, frames)
    }

    @Test("clients of one audience are handed the same frame: one storage for the snapshot at a version, one for each patch")
    func framesShared() async throws {
        let hub = try await BoardHub.make()
        let (ann, annFirst) = await join(hub)
        let (bob, bobFirst) = await join(hub)
        #expect(annFirst.count == 2 && bobFirst.count == 2)
        // Each welcome is the connection's own (it names the client); the snapshot of version 0 is shared.
        #expect(!annFirst[0].sharesStorage(with: bobFirst[0]))
        #expect(annFirst[1].sharesStorage(with: bobFirst[1]))

        _ = await hub.perform(.setTitle("Groceries"), as: "server")
        hub.tick()
        guard case .frames(let annPatch)? = await ann.nextBatch(), case .frames(let bobPatch)? = await bob.nextBatch() else {
            Issue.record("no patch")
            return
        }
        #expect(annPatch.map(\.text) == [#"{"type":"patch","from":0,"version":1,"set":{"title":"Groceries"}}"#])
        #expect(annPatch.count == 1 && bobPatch.count == 1)
        #expect(annPatch[0].sharesStorage(with: bobPatch[0]))
        #expect(!annPatch[0].sharesStorage(with: annFirst[1]))
    }

    @Test("the frames waiting for a connection come in one batch, in order, and the next call waits for new ones")
    func oneBatch() async throws {
        let hub = try await BoardHub.make()
        let (connection, _) = await join(hub)
        for ref in 1...3 { connection.receive(#"{"type":"ping","ref":\#(ref)}"#) }
        #expect(connection.queuedFrames == 3)
        #expect(await connection.nextBatch() == .frames([
            LiveFrame(#"{"type":"pong","ref":1}"#), LiveFrame(#"{"type":"pong","ref":2}"#), LiveFrame(#"{"type":"pong","ref":3}"#),
        ]))
        #expect(connection.queuedFrames == 0 && !connection.hasWrite)
        // The next batch holds only what came after.
        connection.receive(#"{"type":"ping","ref":4}"#)
        #expect(await connection.nextBatch()?.texts == [#"{"type":"pong","ref":4}"#])
    }

    @Test("a frame's transport buffer is made once, for every copy and every thread")
    func transportBufferOnce() async throws {
        let frame = LiveFrame(#"{"type":"patch","from":0,"version":1,"set":{"title":"x"}}"#)
        let made = Calls()
        let buffers = await withTaskGroup(of: FakeBuffer.self) { group in
            for _ in 0..<8 {
                let copy = frame
                group.addTask {
                    copy.transportBuffer { frame -> FakeBuffer in
                        made.add()
                        return FakeBuffer(frame)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(made.value == 1)
        #expect(buffers.allSatisfy { $0 === buffers[0] })
        #expect(buffers[0].bytes == Array(frame.text.utf8))
        // Another frame with the same bytes is another storage, with its own buffer.
        let other = LiveFrame(frame.text)
        #expect(other == frame && !other.sharesStorage(with: frame))
        #expect(other.transportBuffer(FakeBuffer.init) !== buffers[0])
        // A second buffer type is made on each call and not kept in place of the first.
        #expect(frame.transportBuffer { Array($0.text.utf8) } == buffers[0].bytes)
        #expect(frame.transportBuffer { _ -> FakeBuffer in Issue.record("made again"); return FakeBuffer(frame) } === buffers[0])
    }

    @Test("a frame made from a String keeps its bytes and text")
    func frameText() {
        let text = #"{"type":"error","code":"malformed","message":"naïve ✓"}"#
        let frame = LiveFrame(text)
        #expect(frame.text == text && frame.description == text)
        #expect(frame.count == text.utf8.count)
        #expect(frame.withUTF8 { Array($0) } == Array(text.utf8))
    }

    @available(*, deprecated, message: "tests the deprecated nextWrite() and takeWrite()")
    @Test("the deprecated nextWrite() and takeWrite() hand the same frames as text")
    func oldSpelling() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        connection.receive(goodHello)
        guard case .frames(let texts)? = await connection.nextWrite() else {
            Issue.record("no welcome")
            return
        }
        #expect(texts.map { object($0)["type"] as? String } == ["welcome", "snapshot"])
        connection.receive(#"{"type":"ping","ref":7}"#)
        #expect(await connection.nextWrite() == .frames([#"{"type":"pong","ref":7}"#]))
        connection.receive(#"{"type":"hello","protocol":1}"#)
        _ = await connection.nextWrite()
        #expect(await connection.nextWrite() == .close(.protocolError, reason: "hello_expected"))
        #expect(await connection.nextWrite() == nil)

        var session = LiveSession<BoardCommand, String>()
        session.receive(invalid: LiveFrameError(.malformed, "not JSON", ref: 3))
        #expect(session.takeWrite() == .frames([#"{"type":"error","code":"malformed","message":"not JSON (the first frame must be a hello)","ref":3}"#]))
        #expect(session.takeWrite() == .close(.protocolError, reason: "malformed"))
        #expect(session.takeWrite() == nil)
    }
}
