import Foundation
import Stillwater
import StillwaterLive
import Synchronization
import Testing
@testable import StillwaterLive

/// The logs of a set of rooms, kept across the rooms' openings, with a count of openings per room.
final class RoomLogs: Sendable {
    private let logs = Mutex<[String: BoardLog]>([:])
    private let openings = Mutex<[String: Int]>([:])

    func log(_ room: String) -> BoardLog {
        logs.withLock { logs in
            if let log = logs[room] { return log }
            let log = BoardLog()
            logs[room] = log
            return log
        }
    }

    func opened(_ room: String) { openings.withLock { $0[room, default: 0] += 1 } }
    func openings(_ room: String) -> Int { openings.withLock { $0[room, default: 0] } }
}

@Suite("Rooms opened on demand")
struct LiveRoomsTests {
    let logs = RoomLogs()

    func rooms(idle: Duration = .milliseconds(100)) -> LiveRooms<BoardService> {
        LiveRooms(idleTimeout: idle) { [logs] room in
            guard room != "missing" else { throw LiveHubError("no room \"\(room)\"") }
            logs.opened(room)
            try await Task.sleep(for: .milliseconds(20))   // an open takes a while: joins meanwhile wait for it
            return try await BoardHub.make(log: logs.log(room))
        }
    }

    /// Waits until `condition` holds, for at most two seconds.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<200 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test("a room opens once on its first joins, closes after the idle time once its last client left, and opens again with its state")
    func openCloseReopen() async throws {
        let rooms = rooms()
        async let first = rooms.connect(to: "alpha")
        async let second = rooms.connect(to: "alpha")
        let (a, b) = try await (first, second)
        #expect(logs.openings("alpha") == 1)
        #expect(rooms.openRooms == ["alpha"])
        a.receive(goodHello)
        b.receive(goodHello)
        _ = await drain(a)
        #expect(try await rooms.hub(for: "alpha").perform(.add(text: "kept"), as: "server") == .applied(version: 1))
        a.transportClosed()
        try await Task.sleep(for: .milliseconds(250))
        #expect(rooms.openRooms == ["alpha"])          // one client is still in it
        b.transportClosed()
        #expect(await eventually { rooms.openRooms.isEmpty })
        let hub = try await rooms.hub(for: "alpha")          // waits for the close to end, then opens again
        #expect(logs.openings("alpha") == 2)
        // Closed properly: the snapshot covers the record, so the open replayed nothing.
        #expect(try await logs.log("alpha").open().snapshot?.version == 1)
        #expect(hub.view.items.map(\.text) == ["kept"])
        await rooms.close()
    }

    @Test("a room that cannot open refuses the join and is tried again on the next")
    func failedOpen() async throws {
        let rooms = rooms()
        await #expect(throws: LiveHubError("no room \"missing\"")) { _ = try await rooms.connect(to: "missing") }
        #expect(rooms.openRooms.isEmpty)
        _ = try await rooms.hub(for: "beta")
        #expect(rooms.openRooms == ["beta"])
        await rooms.close()
        await #expect(throws: LiveHubError("the rooms are closed")) { _ = try await rooms.connect(to: "beta") }
    }

    @Test("a room only read by the server closes after the idle time; a join meanwhile keeps it open")
    func readOnlyRoomCloses() async throws {
        let rooms = rooms()
        _ = try await rooms.hub(for: "gamma")
        _ = try await rooms.hub(for: "delta")
        let join = try await rooms.connect(to: "delta")
        #expect(await eventually { rooms.openRooms == ["delta"] })
        try await Task.sleep(for: .milliseconds(200))
        #expect(rooms.openRooms == ["delta"])
        join.transportClosed()
        #expect(await eventually { rooms.openRooms.isEmpty })
        await rooms.close()
    }

    @Test("rooms let go without close() stop ticking their open hubs, which are then released")
    func releasedWithoutClose() async throws {
        weak var hub: BoardHub?
        do {
            let rooms = rooms(idle: .seconds(3_600))
            hub = try await rooms.hub(for: "eta")
        }
        #expect(await eventually { hub == nil })
    }

    @Test("a room closed for being idle lets its hub go")
    func closedRoomReleasesHub() async throws {
        let rooms = rooms()
        weak var hub: BoardHub?
        do {
            let connection = try await rooms.connect(to: "zeta")
            connection.receive(goodHello)
            _ = await drain(connection)
            hub = try await rooms.hub(for: "zeta")
            connection.transportClosed()
        }
        #expect(hub != nil)
        #expect(await eventually { rooms.openRooms.isEmpty })
        #expect(await eventually { hub == nil })
    }

    @Test("an open room with a client who has the newest view ticks no more")
    func idleOpenRoomDoesNotTick() async throws {
        let rooms = rooms()
        let connection = try await rooms.connect(to: "epsilon")
        connection.receive(goodHello)
        _ = await drain(connection)
        let hub = try await rooms.hub(for: "epsilon")
        _ = await hub.perform(.add(text: "one"), as: "server")
        #expect(await eventually { connection.queuedFrames > 0 })   // the rooms tick the hub
        _ = await drain(connection)
        try await Task.sleep(for: .milliseconds(50))
        let ticks = hub.shared.ticks
        try await Task.sleep(for: .milliseconds(300))
        #expect(hub.shared.ticks == ticks)
        await rooms.close()
        #expect(connection.phase == .closing || connection.phase == .closed)
    }
}
