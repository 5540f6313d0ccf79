import Foundation
import Stillwater
@testable import StillwaterLive
import Synchronization
import Testing

/// Every event an observer was told, in order.
final class EventRecorder: LiveObserver {
    private let recorded = Mutex<[LiveEvent]>([])

    func record(_ event: LiveEvent) { recorded.withLock { $0.append(event) } }

    var events: [LiveEvent] { recorded.withLock { $0 } }

    var commands: [LiveCommandReport] {
        events.compactMap { if case .command(let report) = $0 { report } else { nil } }
    }

    var opened: [LiveConnectionInfo] {
        events.compactMap { if case .connectionOpened(let info) = $0 { info } else { nil } }
    }

    var admitted: [LiveConnectionInfo] {
        events.compactMap { if case .connectionAdmitted(let info) = $0 { info } else { nil } }
    }

    var closed: [(info: LiveConnectionInfo, code: LiveCloseCode?)] {
        events.compactMap { if case .connectionClosed(let info, let code, _) = $0 { (info, code) } else { nil } }
    }

    var viewFrames: [(room: String?, kind: LiveViewFrameKind, bytes: Int, connections: Int)] {
        events.compactMap {
            if case .viewFrame(let room, let kind, let bytes, let connections) = $0 { (room, kind, bytes, connections) } else { nil }
        }
    }
}

/// Waits until `condition` holds (events told after a frame was handed over come a moment later), at
/// most 5 s.
func untilTrue(_ condition: () -> Bool) async {
    for _ in 0..<1_000 where !condition() { try? await Task.sleep(for: .milliseconds(5)) }
}

/// A board whose clients are named to observers.
struct NamedBoard: LiveService {
    let board = BoardService()
    func view(of state: Board) -> BoardView { board.view(of: state) }
    func decide(_ command: BoardCommand, state: Board, identity: String) -> LiveDecision<BoardAction> {
        board.decide(command, state: state, identity: identity)
    }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { await board.authenticate(handshake) }
    func observedIdentity(of identity: String) -> String? { "user:\(identity)" }
}

@Suite("LiveObserver: what a hub reports, and when")
struct LiveObserverTests {
    /// A connection admitted with the good token, its welcome and snapshot taken.
    func join<Service: LiveService>(_ hub: LiveHub<Service>, user: String = "ann") async -> LiveConnection<Service> {
        let connection = hub.connect()
        connection.receive(#"{"type":"hello","protocol":1,"token":"good","params":{"user":"\#(user)"}}"#)
        _ = await connection.nextBatch()
        return connection
    }

    /// Sends `command` and waits until the hub answered it (and told its observer).
    func send(_ command: BoardCommand, ref: Int, cid: String? = nil, on connection: LiveConnection<BoardService>,
              hub: BoardHub) async {
        connection.receive(commandFrame(command, ref: ref, cid: cid))
        await hub.settle()
        _ = await drain(connection)
    }

    @Test("a session: connection, commands of every outcome with their timelines, frames, snapshots, a slow client's close")
    func session() async throws {
        let recorder = EventRecorder()
        let log = BoardLog()
        var options = LiveOptions(limits: LiveLimits(window: 2, maxQueuedFrames: 10), snapshotEvery: 2)
        options.observer = recorder
        options.observedRoom = "team-a"
        let hub = try await BoardHub.make(log: log, options: options)
        #expect(hub.observedRoom == "team-a")
        #expect(hub.observer is EventRecorder)

        let connection = await join(hub)
        let number = try #require(recorder.opened.first?.connection)
        #expect(recorder.opened == [LiveConnectionInfo(room: "team-a", connection: number, identity: nil)])
        // The service tells no identity by default: none is reported.
        #expect(recorder.admitted == [LiveConnectionInfo(room: "team-a", connection: number, identity: nil)])
        let admission = try #require(recorder.viewFrames.first)
        #expect(admission.kind == .snapshot && admission.connections == 1 && admission.room == "team-a" && admission.bytes > 20)

        await send(.add(text: "milk"), ref: 1, cid: "c1", on: connection, hub: hub)
        await send(.add(text: "milk"), ref: 2, cid: "c1", on: connection, hub: hub)
        await send(.toggle(id: "missing"), ref: 3, on: connection, hub: hub)
        log.failNextAppend()
        await send(.add(text: "eggs"), ref: 4, on: connection, hub: hub)
        #expect(recorder.commands.map(\.outcomeName) == ["applied", "duplicate", "rejected", "unavailable"])
        #expect(recorder.commands.allSatisfy { $0.connection == number && $0.room == "team-a" && $0.identity == nil })
        #expect(recorder.commands.map(\.cid) == ["c1", "c1", nil, nil])

        // The applied command went through every step, in order.
        let applied = recorder.commands[0].timeline
        let steps = [applied.received, applied.decideStarted, applied.decided, applied.appendStarted, applied.appended,
                     applied.applied, applied.answered]
        let instants = steps.compactMap { $0 }
        #expect(instants.count == 7)
        #expect(instants == instants.sorted())
        #expect(applied.decisions == 1 && applied.batchSize == 1)
        #expect(applied.ackLatency >= (applied.appendTime ?? .zero))
        // The failed append started and never ended; the log's failure was told with its words.
        let failed = recorder.commands[3].timeline
        #expect(failed.appendStarted != nil && failed.appended == nil && failed.applied == nil)
        let logFailures = recorder.events.compactMap { event -> (String?, LiveLogOperation, String)? in
            if case .logFailed(let room, let operation, let error) = event { (room, operation, error) } else { nil }
        }
        #expect(logFailures.count == 1)
        #expect(logFailures.first?.0 == "team-a" && logFailures.first?.1 == .append && logFailures.first?.2 == "the disk is full")

        // A tick queues one patch for the connection, counted once with its bytes.
        _ = await hub.perform(.add(text: "bread"), as: "server")       // version 2: the first snapshot is due
        hub.tick()
        await untilTrue { recorder.viewFrames.count == 2 }
        let patch = try #require(recorder.viewFrames.last)
        #expect(patch.kind == .patch && patch.connections == 1 && patch.room == "team-a")
        _ = await drain(connection)
        // The server's own command has no connection.
        #expect(recorder.commands.last?.connection == nil && recorder.commands.last?.outcomeName == "applied")

        await hub.settle()
        log.failNextSnapshot()
        _ = await hub.perform(.add(text: "jam"), as: "server")
        _ = await hub.perform(.add(text: "tea"), as: "server")         // version 4: this snapshot fails
        await hub.settle()
        let snapshots = recorder.events.compactMap { event -> String? in
            switch event {
            case .snapshotWritten(let room, let version, _): "written \(version) \(room ?? "-")"
            case .snapshotFailed(let room, let version, let error): "failed \(version) \(room ?? "-") \(error)"
            default: nil
            }
        }
        #expect(snapshots == ["written 2 team-a", "failed 4 team-a the disk is full"])

        // A client that sends and never reads: closed with 4429, reported once with its code.
        for _ in 0..<100 { connection.receive("not json") }
        #expect(await connection.nextBatch() == .close(.tooSlow, reason: "the client read too slowly"))
        await untilTrue { !recorder.closed.isEmpty }
        #expect(recorder.closed.count == 1)
        #expect(recorder.closed.first?.info.connection == number && recorder.closed.first?.code == .tooSlow)
        await hub.close()
        #expect(recorder.closed.count == 1)
    }

    @Test("a connection closed by its client is reported without a code; one let go of without a close, once")
    func closedWithoutCode() async throws {
        let recorder = EventRecorder()
        var options = LiveOptions()
        options.observer = recorder
        let hub = try await BoardHub.make(options: options)
        let first = await join(hub)
        first.transportClosed()
        await untilTrue { recorder.closed.count == 1 }
        #expect(recorder.closed.first?.code == nil && recorder.closed.first?.info.room == nil)
        do {
            let dropped = await join(hub, user: "bob")
            _ = dropped
        }
        await untilTrue { recorder.closed.count == 2 }
        #expect(recorder.closed.count == 2)
        #expect(Set(recorder.closed.map(\.info.connection)) == Set(recorder.opened.map(\.connection)))
        await hub.close()
    }

    @Test("the service's observedIdentity names the client in its admission and its commands")
    func identityWhereAllowed() async throws {
        let recorder = EventRecorder()
        var options = LiveOptions()
        options.observer = recorder
        let hub = try await LiveHub.open(NamedBoard(), log: BoardLog(), initial: Board(), options: options)
        let connection = await join(hub, user: "ann")
        connection.receive(commandFrame(.add(text: "milk"), ref: 1))
        await hub.settle()
        #expect(recorder.admitted.map(\.identity) == ["user:ann"])
        #expect(recorder.commands.map(\.identity) == ["user:ann"])
        await hub.close()
    }

    @Test("rooms: opened with the time it took, a room that cannot open, closed once idle; the rooms' observer names each hub's room")
    func rooms() async throws {
        let recorder = EventRecorder()
        let logs = ["alpha": BoardLog()]
        let rooms = LiveRooms<BoardService>(idleTimeout: .milliseconds(20), observer: recorder) { room in
            guard let log = logs[room] else { throw LiveHubError("no room named \(room)") }
            return try await BoardHub.make(log: log)
        }
        let connection = try await rooms.connect(to: "alpha")
        #expect(recorder.opened.map(\.room) == ["alpha"])
        #expect(try await rooms.hub(for: "alpha").observedRoom == "alpha")
        await #expect(throws: LiveHubError.self) { try await rooms.connect(to: "nope") }
        connection.transportClosed()
        await untilTrue { recorder.events.contains { if case .roomClosed = $0 { true } else { false } } }
        let roomEvents = recorder.events.compactMap { event -> String? in
            switch event {
            case .roomOpened(let room, _): "opened \(room)"
            case .roomOpenFailed(let room, let error): "failed \(room): \(error)"
            case .roomClosed(let room): "closed \(room)"
            default: nil
            }
        }
        #expect(roomEvents == ["opened alpha", "failed nope: no room named nope", "closed alpha"])
        await rooms.close()
    }

    @Test("a group tells each observer every event, in order; a hub without an observer has none")
    func group() async throws {
        let first = EventRecorder(), second = EventRecorder()
        var options = LiveOptions()
        options.observer = LiveObserverGroup([first, second])
        let hub = try await BoardHub.make(options: options)
        _ = await hub.perform(.add(text: "milk"), as: "server")
        await hub.settle()
        #expect(first.commands.count == 1 && second.commands.count == 1)
        let quiet = try await BoardHub.make()
        #expect(quiet.observer == nil && quiet.reporter == nil && quiet.observedRoom == nil)
        await hub.close()
        await quiet.close()
    }
}
