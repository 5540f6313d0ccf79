import Foundation
import StillwaterLive
import Testing

@Suite("A hub's hello time limit", .timeLimit(.minutes(5)))
struct LiveHelloTimeoutTests {
    /// What `connection` writes until it closes, and when it closed (since `start`).
    func ending(of connection: LiveConnection<BoardService>, since start: ContinuousClock.Instant) async -> ([LiveWrite], Duration) {
        var writes: [LiveWrite] = []
        while let write = await connection.nextBatch() {
            writes.append(write)
            if case .close = write { break }
        }
        return (writes, ContinuousClock.now - start)
    }

    @Test("a connection that sends no hello gets hello_timeout and 4408 at its limit; one that said hello stays")
    func silentConnectionClosed() async throws {
        // 5 s: long enough for the greeted one's hello to be decided (in a task) while the whole suite
        // keeps the machine's two cores busy.
        let hub = try await BoardHub.make(options: LiveOptions(helloTimeout: .seconds(5)))
        let greeted = hub.connect()
        greeted.receive(goodHello)
        let start = ContinuousClock.now
        let silent = hub.connect()
        let (writes, elapsed) = await ending(of: silent, since: start)
        #expect(writes.count == 2)
        #expect(writes.first?.texts.map { $0.map { object($0)["code"] as? String } } == [.some("hello_timeout")])
        #expect(writes.last == .close(.helloTimeout, reason: "hello_timeout"))
        #expect(elapsed >= .seconds(5), "closed after \(elapsed)")
        #expect(greeted.phase == .live)
    }

    @Test("connections made at different times are each timed out at their own limit, in order")
    func eachAtItsOwnTime() async throws {
        let hub = try await BoardHub.make(options: LiveOptions(helloTimeout: .milliseconds(400)))
        let start = ContinuousClock.now
        let first = hub.connect()
        try await Task.sleep(for: .milliseconds(250))
        let second = hub.connect()
        async let firstEnding = ending(of: first, since: start)
        async let secondEnding = ending(of: second, since: start)
        let (firstWrites, firstElapsed) = await firstEnding
        let (secondWrites, secondElapsed) = await secondEnding
        #expect(firstWrites.last == .close(.helloTimeout, reason: "hello_timeout"))
        #expect(secondWrites.last == .close(.helloTimeout, reason: "hello_timeout"))
        #expect(firstElapsed >= .milliseconds(400), "the first closed after \(firstElapsed)")
        #expect(secondElapsed >= .milliseconds(650), "the second closed after \(secondElapsed), its limit 400 ms after 250 ms")
        #expect(secondElapsed > firstElapsed)
    }

    @Test("a connection waiting for its limit is not kept alive by it")
    func notKeptAlive() async throws {
        let hub = try await BoardHub.make(options: LiveOptions(helloTimeout: .seconds(60)))
        weak var weakConnection: LiveConnection<BoardService>?
        do {
            let connection = hub.connect()
            weakConnection = connection
            #expect(weakConnection != nil)
        }
        #expect(weakConnection == nil)
        // The hub serves a new connection as before.
        let later = hub.connect()
        later.receive(goodHello)
        #expect(await later.nextBatch() != nil)
        #expect(later.phase == .live)
    }
}
