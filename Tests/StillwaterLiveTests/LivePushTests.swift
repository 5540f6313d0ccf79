import Dispatch
import Foundation
import StillwaterLive
import Synchronization
import Testing

/// What an adapter told by `writeWhenReady` saw: how often it was told, and the writes it took.
private final class PushLog: Sendable {
    private let state = Mutex<(told: Int, writes: [LiveWrite])>((0, []))

    /// A batch handed over by the connection (`writeWhenReady`), kept without taking more.
    func handed(_ write: LiveWrite) {
        state.withLock {
            $0.told += 1
            $0.writes.append(write)
        }
    }
    func took(_ write: LiveWrite) { state.withLock { $0.writes.append(write) } }
    var toldCount: Int { state.withLock { $0.told } }
    var writes: [LiveWrite] { state.withLock { $0.writes } }
    /// Every frame taken, in order.
    /// Records `first` and every batch `connection` has after it, until it has none: what an adapter
    /// handed a batch does.
    func takeAll(from first: LiveWrite, of connection: LiveConnection<BoardService>?) {
        var write: LiveWrite? = first
        while let batch = write {
            took(batch)
            write = connection?.takeBatch()
        }
    }

    var texts: [String] {
        writes.flatMap { write -> [String] in
            if case .frames(let frames) = write { frames.map(\.text) } else { [] }
        }
    }
}

/// Something the adapter's `ready` holds, to see when the connection lets go of it.
private final class Held: Sendable {}

@Suite("LiveConnection.writeWhenReady: writes pushed to the adapter", .timeLimit(.minutes(5)))
struct LivePushTests {
    /// Waits (up to 10 s) until `condition` holds.
    func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test("a batch is handed over when the adapter is not busy; what comes meanwhile waits for its takeBatch()")
    func handedOncePerDrain() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        let log = PushLog()
        connection.writeWhenReady(log.handed)
        connection.receive(goodHello)
        try await eventually { log.toldCount == 1 }
        #expect(log.writes.first?.texts?.count == 2, "the welcome and the snapshot, in one batch")
        // More frames while the adapter has not asked again: they wait for it.
        for ref in 1...3 { connection.receive(#"{"type":"ping","ref":\#(ref)}"#) }
        #expect(log.toldCount == 1)
        #expect(connection.takeBatch()?.texts == (1...3).map { #"{"type":"pong","ref":\#($0)}"# })
        #expect(connection.takeBatch() == nil)
        #expect(log.toldCount == 1)
        // The take that found nothing: the next batch is handed over, then the adapter is busy again.
        connection.receive(#"{"type":"ping","ref":4}"#)
        connection.receive(#"{"type":"ping","ref":5}"#)
        #expect(log.toldCount == 2)
        #expect(log.writes.last?.texts == [#"{"type":"pong","ref":4}"#])
        #expect(connection.takeBatch()?.texts == [#"{"type":"pong","ref":5}"#])
        #expect(connection.takeBatch() == nil)
    }

    @Test("frames waiting already are handed over at once")
    func handedAtOnce() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        connection.receive(goodHello)
        try await eventually { connection.hasWrite }
        let log = PushLog()
        connection.writeWhenReady { log.took($0) }
        #expect(log.writes.count == 1 && log.writes.first?.texts?.count == 2)
        #expect(connection.takeBatch() == nil)
    }

    @Test("a drain on another thread takes every frame once and in order while four threads queue them and the hub ticks")
    func concurrentQueueing() async throws {
        let hub = try await BoardHub.make(options: LiveOptions(limits: LiveLimits(maxQueuedFrames: 100_000)))
        let connection = hub.connect()
        let log = PushLog()
        let queue = DispatchQueue(label: "adapter")
        connection.writeWhenReady { [weak connection] first in
            queue.async { [weak connection] in log.takeAll(from: first, of: connection) }
        }
        connection.receive(goodHello)
        try await eventually { connection.phase == .live }
        let perSender = 300
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<4 {
                group.addTask {
                    for index in 0..<perSender { connection.receive(#"{"type":"ping","ref":\#(sender * 10_000 + index)}"#) }
                }
            }
            group.addTask {
                for index in 0..<50 {
                    _ = await hub.perform(.add(text: "item \(index)"), as: "server")
                    hub.tick()
                }
            }
        }
        hub.tick()
        // Every pong, and the last tick's patch (taken on the adapter's queue).
        let patchTo = #""version":\#(hub.version),"#
        try await eventually {
            let texts = log.texts
            return texts.filter { $0.contains("pong") }.count == 4 * perSender
                && texts.contains { $0.contains(#""type":"patch""#) && $0.contains(patchTo) }
        }
        let texts = log.texts
        for sender in 0..<4 {
            let refs = texts.compactMap { text -> Int? in
                guard text.contains("pong"), let ref = object(text)["ref"] as? Int, ref / 10_000 == sender else { return nil }
                return ref % 10_000
            }
            #expect(refs == Array(0..<perSender), "sender \(sender)'s pongs, once each and in order")
        }
        // The patches bring the client to the hub's version, each from the version the one before reached.
        var version = 0
        for text in texts where text.contains(#""type":"patch""#) {
            let patch = object(text)
            #expect(patch["from"] as? Int == version)
            version = patch["version"] as? Int ?? -1
        }
        #expect(version == hub.version)
    }

    @Test("the connection lets go of the adapter's write once the socket closed")
    func lettingGoOnTransportClose() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        weak var weakHeld: Held?
        do {
            let held = Held()
            weakHeld = held
            connection.writeWhenReady { _ in _ = held }
        }
        #expect(weakHeld != nil)
        connection.receive(goodHello)
        try await eventually { connection.phase == .live }
        connection.transportClosed()
        #expect(weakHeld == nil)
        #expect(connection.takeBatch() == nil)
    }

    @Test("a server close is taken after the frames, then nothing, and the adapter's write is let go")
    func closeAfterFrames() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        let log = PushLog()
        weak var weakHeld: Held?
        do {
            let held = Held()
            weakHeld = held
            connection.writeWhenReady { [weak connection] first in
                _ = held
                log.takeAll(from: first, of: connection)
            }
        }
        connection.receive(goodHello)
        try await eventually { connection.phase == .live }
        connection.receive(#"{"type":"ping","ref":1}"#)
        await hub.close()
        try await eventually { connection.phase == .closed }
        let writes = log.writes
        #expect(writes.last == .close(.goingAway, reason: "the server is shutting down"))
        #expect(log.texts.last == #"{"type":"pong","ref":1}"#)
        #expect(weakHeld == nil)
        #expect(connection.takeBatch() == nil)
    }

    @Test("an adapter that stops taking (a saturated socket) is handed nothing more; the outbox's bound closes the client, 4429, after its frames")
    func slowAdapter() async throws {
        let hub = try await BoardHub.make(options: LiveOptions(limits: LiveLimits(window: 4, maxQueuedFrames: 8)))
        let connection = hub.connect()
        let log = PushLog()
        connection.writeWhenReady(log.handed)
        connection.receive(goodHello)
        try await eventually { connection.phase == .live }
        for ref in 1...40 { connection.receive(#"{"type":"ping","ref":\#(ref)}"#) }
        #expect(log.toldCount == 1)
        var writes: [LiveWrite] = []
        while let write = connection.takeBatch() { writes.append(write) }
        guard case .close(let code, _)? = writes.last else {
            Issue.record("no close: \(writes)")
            return
        }
        #expect(code == .tooSlow)
        #expect(writes.dropLast().allSatisfy { if case .frames = $0 { true } else { false } })
        #expect(log.toldCount == 1)
    }
}
