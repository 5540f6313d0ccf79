import Foundation
import LiveServerCore
import Stillwater
import StillwaterLive
import Testing

@Suite("A slow client")
struct SlowClientTests {
    /// A connection to `hub` through its welcome and snapshot.
    static func join(_ hub: LiveHub<BoardService>) async throws -> LiveConnection<BoardService> {
        let connection = hub.connect()
        connection.receive(helloFrame(token: seededTokens["alpha"]))
        guard await nextFrames(connection).count == 2 else { throw TestFailure("no welcome and snapshot") }
        return connection
    }

    @Test("a client that reads nothing holds one patch however many changes come, never holds up the board, and gets the newest view in it")
    func coalesced() async throws {
        let hub = try #require(try await seededHubs()["alpha"])
        let connection = try await Self.join(hub)
        // 100 changes (fewer than the views a hub keeps), with the hub's patch tick after each, while the
        // client reads nothing: every command is answered (the board does not wait for this client).
        for step in 0..<100 {
            #expect(await hub.perform(step.isMultiple(of: 2) ? .add(text: "item \(step)") : .toggle(id: "i2"), as: .member("alpha"))
                == .applied(version: step + 1))
            hub.tick()
        }
        // What waits for it is the one patch of the first tick; the ticks after it skipped the client.
        // (Presence frames, about its own join, may be beside it: they are left out here.)
        let waiting = await nextFrames(connection)
        #expect(waiting.map(object).map { $0["version"] as? Int } == [1])
        // Once it read that, the next tick brings it from there to the newest view in one patch.
        hub.tick()
        let next = await nextFrames(connection)
        #expect(next.count == 1)
        #expect(object(next[0])["from"] as? Int == 1 && object(next[0])["version"] as? Int == 100, "\(next.map { $0.prefix(80) })")
        connection.transportClosed()
    }

    @Test("with a patch interval, changes within it fold into the next patch")
    func patchInterval() async throws {
        let hub = try #require(try await seededHubs(options: boardOptions(patchInterval: .seconds(1)))["alpha"])
        let ticking = Task { await hub.run() }
        defer { ticking.cancel() }
        let connection = try await Self.join(hub)
        for step in 0..<20 { _ = await hub.perform(.add(text: "item \(step)"), as: .member("alpha")) }
        let frames = await nextFrames(connection)
        #expect(frames.count == 1)
        let patch = object(frames[0])
        #expect(patch["from"] as? Int == 0 && patch["version"] as? Int == 20)
        let items = (patch["lists"] as? [String: Any])?["items"] as? [String: Any]
        #expect(((items?["changes"] as? [String: Any])?["inserts"] as? [Int])?.count == 20)
        connection.transportClosed()
    }
}
