import Foundation
import Stillwater
import StillwaterLive
import StillwaterTesting
import Testing

@Suite("LiveHub", .timeLimit(.minutes(5)))
struct LiveHubTests {
    /// A connection through its hello, with its replica built from the first frames.
    func join(_ hub: BoardHub, hello: String = goodHello) async throws -> (LiveConnection<BoardService>, JSONReplica, [String]) {
        let connection = hub.connect()
        connection.receive(hello)
        var replica = JSONReplica()
        guard let frames = await connection.nextBatch()?.texts else { return (connection, replica, []) }
        if frames.contains(where: { object($0)["type"] as? String == "snapshot" }) {
            for frame in frames { try replica.apply(frame) }
        }
        return (connection, replica, frames)
    }

    @Test("an accepted hello gets a welcome and a snapshot of the view")
    func welcome() async throws {
        let hub = try await BoardHub.make()
        _ = await hub.perform(.setTitle("Groceries"), as: "server")
        let (_, replica, frames) = try await join(hub)
        #expect(frames.map { object($0)["type"] as? String } == ["welcome", "snapshot"])
        #expect(object(frames[0])["stream"] as? String == hub.stream)
        #expect(replica.version == 1)
        #expect(try replica.decoded(as: BoardView.self) == hub.view)
    }

    @Test("a refused hello gets an unauthorized error, then the close 4401, and the hub forgets the connection")
    func refused() async throws {
        let hub = try await BoardHub.make()
        let connection = hub.connect()
        connection.receive(#"{"type":"hello","protocol":1,"token":"bad","ref":1}"#)
        guard let frames = await connection.nextBatch()?.texts else {
            Issue.record("no error frame")
            return
        }
        #expect(object(frames[0])["code"] as? String == "unauthorized")
        #expect(object(frames[0])["message"] as? String == "the token was refused")
        #expect(object(frames[0])["ref"] as? Int == 1)
        #expect(await connection.nextBatch() == .close(.unauthorized, reason: "unauthorized"))
        #expect(await connection.nextBatch() == nil)
        #expect(connection.phase == .closed)
    }

    @Test("snapshot then patches keep a client's replica equal to the server's view", arguments: [1, 2, 3])
    func replicaConverges(seed: UInt64) async throws {
        let hub = try await BoardHub.make()
        let (connection, first, _) = try await join(hub)
        var replica = first
        var random = SeededRandom(seed: seed)
        var acks = 0, errors = 0
        for round in 0..<60 {
            for ref in 0..<Int.random(in: 1...5, using: &random) {
                let command = randomCommand(for: hub.state.value, using: &random)
                connection.receive(commandFrame(command, ref: round * 10 + ref))
                if Bool.random(using: &random) { await hub.settle() }
            }
            await hub.settle()
            if Int.random(in: 0..<3, using: &random) > 0 { hub.tick() }
            for frame in await drain(connection) {
                switch object(frame)["type"] as? String {
                case "ack": acks += 1
                case "error": errors += 1
                default: try replica.apply(frame)
                }
            }
        }
        hub.tick()
        for frame in await drain(connection) { try replica.apply(frame) }
        #expect(replica.version == hub.version)
        #expect(try replica.decoded(as: BoardView.self) == hub.view)
        #expect(replica.snapshots == 1)
        #expect(replica.patches > 10)
        #expect(acks > 0 && errors > 0)
    }

    @Test("resuming from a recent version gets a patch from it; from a forgotten one or another stream, a snapshot")
    func resume() async throws {
        let hub = try await BoardHub.make(options: LiveOptions(historyCapacity: 4))
        _ = await hub.perform(.add(text: "a"), as: "server")
        let recent = hub.version
        _ = await hub.perform(.add(text: "b"), as: "server")
        let resumed = #"{"type":"hello","protocol":1,"token":"good","resume":{"stream":"\#(hub.stream)","version":\#(recent)}}"#
        let (_, patched, frames) = try await join(hub, hello: resumed)
        #expect(object(frames[1])["type"] as? String == "patch")
        #expect(object(frames[1])["from"] as? Int == recent)
        #expect(patched.version == nil)  // a patch applies to the client's own copy, which this one lacks
        // Up to date: the patch says so, with nothing in it.
        let current = #"{"type":"hello","protocol":1,"token":"good","resume":{"stream":"\#(hub.stream)","version":\#(hub.version)}}"#
        let (_, _, upToDate) = try await join(hub, hello: current)
        #expect(upToDate[1] == #"{"type":"patch","from":\#(hub.version),"version":\#(hub.version)}"#)
        for text in ["c", "d", "e", "f"] { _ = await hub.perform(.add(text: text), as: "server") }
        let (_, old, tooOld) = try await join(hub, hello: resumed)
        #expect(object(tooOld[1])["type"] as? String == "snapshot")
        #expect(old.version == hub.version)
        let other = #"{"type":"hello","protocol":1,"token":"good","resume":{"stream":"s-other","version":\#(hub.version)}}"#
        let (_, _, otherStream) = try await join(hub, hello: other)
        #expect(object(otherStream[1])["type"] as? String == "snapshot")
    }

    @Test("a client behind by more than the kept views is sent a snapshot at the next tick")
    func fallsBehind() async throws {
        let hub = try await BoardHub.make(options: LiveOptions(historyCapacity: 3))
        let (connection, first, _) = try await join(hub)
        var replica = first
        for text in ["a", "b", "c", "d", "e"] { _ = await hub.perform(.add(text: text), as: "server") }
        hub.tick()
        let frames = await drain(connection)
        #expect(frames.map { object($0)["type"] as? String } == ["snapshot"])
        try replica.apply(frames[0])
        #expect(try replica.decoded(as: BoardView.self) == hub.view)
    }

    @Test("commands beyond the window are refused with window_full while the log holds them")
    func commandWindow() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log, options: LiveOptions(limits: LiveLimits(window: 2)))
        let (connection, _, _) = try await join(hub)
        log.hold()
        for ref in 1...3 { connection.receive(commandFrame(.add(text: "x\(ref)"), ref: ref)) }
        await log.appendHeld()
        let refused = await drain(connection).map(object)
        #expect(refused.count == 1)
        #expect(refused.first?["code"] as? String == "window_full")
        #expect(refused.first?["ref"] as? Int == 3)
        log.release()
        await hub.settle()
        let acks = await drain(connection).map(object)
        #expect(acks.compactMap { $0["ref"] as? Int }.sorted() == [1, 2])
    }

    @Test("an ack is sent only after the log's append returned; commands arriving meanwhile share the next append")
    func ackAfterAppend() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log)
        let (connection, _, _) = try await join(hub)
        log.hold()
        connection.receive(commandFrame(.add(text: "first"), ref: 1))
        await log.appendHeld()
        for ref in 2...4 { connection.receive(commandFrame(.add(text: "more \(ref)"), ref: ref)) }
        #expect(connection.queuedFrames == 0)
        #expect(hub.version == 0)
        #expect(hub.state.value.items.isEmpty)
        log.release()
        await hub.settle()
        let acks = await drain(connection).map(object)
        #expect(acks.compactMap { $0["ref"] as? Int } == [1, 2, 3, 4])
        #expect(acks.compactMap { $0["version"] as? Int } == [1, 2, 3, 4])
        #expect(log.appendSizes == [1, 3])
        #expect(hub.state.value.items.count == 4)
    }

    @Test("a failed append changes nothing and tells the sender to retry, without the log's own words")
    func appendFails() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log)
        log.failNextAppend()
        #expect(await hub.perform(.add(text: "a"), cid: "a1", as: "server")
            == .unavailable("the log could not record the command; try again later"))
        #expect(hub.version == 0)
        #expect(await hub.perform(.add(text: "a"), cid: "a1", as: "server") == .applied(version: 1))
    }

    @Test("a command retried with its cid after a restart is answered as a duplicate with its version, not applied again")
    func cidAcrossRestart() async throws {
        let log = BoardLog()
        let first = try await BoardHub.make(log: log)
        _ = await first.perform(.add(text: "before"), as: "server")
        #expect(await first.perform(.add(text: "milk"), cid: "k3J9", as: "server") == .applied(version: 2))
        #expect(await first.perform(.add(text: "milk"), cid: "k3J9", as: "server") == .duplicate(version: 2))
        // A restart without a closing snapshot: the new hub replays the records.
        let second = try await BoardHub.make(log: log)
        #expect(second.stream == first.stream)
        #expect(await second.perform(.add(text: "milk"), cid: "k3J9", as: "server") == .duplicate(version: 2))
        #expect(second.view.count == 2)
        // And after a closing snapshot: the ids are in it.
        await second.close()
        let third = try await BoardHub.make(log: log)
        let (connection, _, _) = try await join(third)
        connection.receive(commandFrame(.add(text: "milk"), ref: 7, cid: "k3J9"))
        await third.settle()
        let ack = object(await drain(connection)[0])
        #expect(ack["duplicate"] as? Bool == true)
        #expect(ack["version"] as? Int == 2)
        #expect(third.view.count == 2)
        #expect(log.entries.count == 2)
    }

    @Test("one cid twice in one batch is recorded once; the second is its duplicate")
    func cidTwiceInBatch() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log)
        let (connection, _, _) = try await join(hub)
        log.hold()
        connection.receive(commandFrame(.add(text: "warm up"), ref: 1))
        await log.appendHeld()
        connection.receive(commandFrame(.add(text: "x"), ref: 2, cid: "same"))
        connection.receive(commandFrame(.add(text: "x"), ref: 3, cid: "same"))
        log.release()
        await hub.settle()
        let acks = await drain(connection).map(object)
        #expect(acks.map { $0["version"] as? Int } == [1, 2, 2])
        #expect(acks[2]["duplicate"] as? Bool == true)
        #expect(hub.view.count == 2)
    }

    @Test("a client that never reads holds at most one patch however many changes come")
    func slowReaderBounded() async throws {
        let hub = try await BoardHub.make()
        let (connection, _, _) = try await join(hub)
        for index in 0..<300 {
            _ = await hub.perform(.add(text: "\(index)"), as: "server")
            hub.tick()
            #expect(connection.queuedFrames <= 1)
        }
        var replica = JSONReplica()
        let fresh = try await join(hub)
        replica = fresh.1
        #expect(replica.version == 300)
        let frames = await drain(connection)
        #expect(frames.count == 1)
        hub.tick()
        // The next patch goes from the version the waiting one brought to the newest.
        #expect(connection.queuedFrames == 1)
    }

    @Test("a client that sends and never reads is closed with 4429, its queue bounded")
    func floodingClientClosed() async throws {
        let hub = try await BoardHub.make(options: LiveOptions(limits: LiveLimits(window: 2, maxQueuedFrames: 10)))
        let (connection, _, _) = try await join(hub)
        for _ in 0..<100 {
            connection.receive("not json")
            #expect(connection.queuedFrames <= 10)
        }
        #expect(await connection.nextBatch() == .close(.tooSlow, reason: "the client read too slowly"))
    }

    @Test("malformed frames from a live client get clear errors with their ref, and the connection stays live")
    func malformedFrames() async throws {
        let hub = try await BoardHub.make()
        let (connection, _, _) = try await join(hub)
        connection.receive(#"{"type":"command","ref":3,"command":{"toggle":{"id":"i99"}}}"#)
        await hub.settle()
        connection.receive(#"{"type":"command","ref":4,"command":{"fly":{}}}"#)
        connection.receive(#"{"type":"hello","protocol":1,"ref":5}"#)
        let errors = await drain(connection).map(object)
        #expect(errors.map { $0["ref"] as? Int } == [3, 4, 5])
        #expect(errors.map { $0["code"] as? String } == ["rejected", "bad_command", "hello_expected"])
        #expect(errors[0]["message"] as? String == "no item with id \"i99\"")
    }

    @Test("commands are recorded and answered while a snapshot is being written; close writes the last one after it")
    func snapshotBesideAppends() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log, options: LiveOptions(snapshotEvery: 2))
        log.holdSnapshots()
        // The second command makes a snapshot due; it waits in the log, and the commands after it do not.
        let outcomes = Task {
            var outcomes: [LiveOutcome] = []
            for number in 1...6 { outcomes.append(await hub.perform(.add(text: "n\(number)"), as: "client")) }
            return outcomes
        }
        #expect(await eventually { log.head == 6 }, "commands waited for the snapshot")
        #expect(log.snapshotsHeld == 1, "one snapshot at a time")
        log.releaseSnapshots()
        #expect(await outcomes.value == (1...6).map { LiveOutcome.applied(version: $0) })
        await hub.settle()
        #expect(try await log.open().snapshot?.version == 2)
        await hub.close()
        #expect(try await log.open().snapshot?.version == 6)
    }

    @Test("a closed hub refuses commands as unavailable and closes its connections with 1001")
    func close() async throws {
        let log = BoardLog()
        let hub = try await BoardHub.make(log: log)
        let (connection, _, _) = try await join(hub)
        _ = await hub.perform(.add(text: "a"), as: "server")
        await hub.close()
        _ = await drain(connection)
        #expect(await connection.nextBatch() == .close(.goingAway, reason: "the server is shutting down"))
        #expect(await hub.perform(.add(text: "b"), as: "server") == .unavailable("the server is shutting down"))
        #expect(try await log.open().snapshot?.version == 1)
    }

    @Test("replicas of one shared log converge, and a cid sent to two nodes is applied once")
    func replicasConverge() async throws {
        let log = BoardLog()
        let nodes = [try await BoardHub.make(log: log), try await BoardHub.make(log: log), try await BoardHub.make(log: log)]
        var random = SeededRandom(seed: 7)
        for round in 0..<40 {
            let node = nodes[round % nodes.count]
            try await node.refresh()
            let command = randomCommand(for: node.state.value, using: &random)
            _ = await node.perform(command, cid: "c\(round)", as: "client")
        }
        let once = await nodes[0].perform(.add(text: "once"), cid: "twice", as: "client")
        guard case .applied(let version) = once else {
            Issue.record("not applied: \(once)")
            return
        }
        #expect(await nodes[1].perform(.add(text: "once"), cid: "twice", as: "client") == .duplicate(version: version))
        for node in nodes { try await node.refresh() }
        #expect(nodes.allSatisfy { $0.version == log.head })
        #expect(nodes.allSatisfy { $0.view == nodes[0].view })
        #expect(nodes.allSatisfy { $0.state.value == nodes[0].state.value })
        #expect(nodes[0].view.items.filter { $0.text == "once" }.count == 1)
        let fresh = try await BoardHub.make(log: log)
        #expect(fresh.view == nodes[0].view)
    }

    @Test("a hub opened on records after the log's snapshot writes a snapshot when closed, with no new command")
    func closeSnapshotsReplayedRecords() async throws {
        let log = BoardLog()
        let first = try await BoardHub.make(log: log)
        for number in 0..<3 { _ = await first.perform(.add(text: "n\(number)"), as: "client") }
        // Not closed (as after a crash): the log holds three records after its first snapshot.
        #expect(try await log.open().snapshot?.version == 0)
        let reopened = try await BoardHub.make(log: log)
        await reopened.close()
        let contents = try await log.open()
        #expect(contents.snapshot?.version == 3)
        #expect(contents.records.isEmpty)
    }

    @Test("hubs opened at once on a new shared log each store a first snapshot, and all end with the one the log kept")
    func simultaneousOpens() async throws {
        let log = BoardLog()
        log.gatherOpens(3)
        async let first = BoardHub.make(log: log)
        async let second = BoardHub.make(log: log)
        async let third = BoardHub.make(log: log)
        let hubs = try await [first, second, third]
        let kept = try #require(try await log.open().snapshot)
        #expect(kept.version == 0)
        #expect(hubs.map(\.stream) == Array(repeating: kept.state.stream, count: 3))
        _ = await hubs[0].perform(.add(text: "one"), cid: "c1", as: "client")
        try await hubs[2].refresh()
        #expect(hubs[2].view == hubs[0].view)
    }

    @Test("a replica further behind than the log keeps starts again from the log's snapshot, then goes on")
    func replicaBehindPrunedRecords() async throws {
        let log = BoardLog()
        let ahead = try await BoardHub.make(log: log, options: LiveOptions(snapshotEvery: 10))
        let behind = try await BoardHub.make(log: log)
        for number in 0..<30 { _ = await ahead.perform(.add(text: "n\(number)"), cid: "n\(number)", as: "client") }
        await ahead.settle()   // the snapshot at 30 is written beside the appends
        #expect(try await log.open().snapshot?.version == 30)
        log.prune(through: 25)
        // Its next command finds the records it lacks gone: it starts again from the snapshot, then goes on.
        #expect(await behind.perform(.add(text: "from behind"), cid: "late", as: "client") == .applied(version: 31))
        try await ahead.refresh()
        #expect(behind.view == ahead.view)
        #expect(behind.state.value == ahead.state.value)
        #expect(behind.view.items.count == 31)
        // Its ids came with the snapshot: one of the pruned commands resent is a duplicate.
        #expect(await behind.perform(.add(text: "n3"), cid: "n3", as: "client") == .duplicate(version: 4))
    }

    @Test("a replica's clients see others' commands as patches once it catches up")
    func replicaClients() async throws {
        let log = BoardLog()
        let writer = try await BoardHub.make(log: log), reader = try await BoardHub.make(log: log)
        let (connection, first, _) = try await join(reader)
        var replica = first
        _ = await writer.perform(.add(text: "from the other node"), as: "server")
        reader.advance(to: log.head)
        await reader.settle()
        reader.tick()
        for frame in await drain(connection) { try replica.apply(frame) }
        #expect(try replica.decoded(as: BoardView.self) == writer.view)
    }

    @Test("a view that leaves a member out of liveFields stops the program, naming it")
    func incompleteFields() async {
        await #expect(processExitsWith: .failure) {
            struct Partial: LiveView {
                var shown: Int
                var forgotten: Int
                static let liveFields: [LiveField<Partial>] = [.value("shown", \.shown)]
            }
            struct PartialService: LiveService {
                func view(of state: Board) -> Partial { Partial(shown: 1, forgotten: 2) }
                func decide(_ command: BoardCommand, state: Board, identity: String) -> LiveDecision<BoardAction> {
                    .reject("no")
                }
                func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .refused("no") }
            }
            _ = try? await LiveHub.open(PartialService(), log: BoardLog(), initial: Board())
        }
    }
}
