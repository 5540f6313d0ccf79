import Foundation
import Stillwater
import StillwaterLive
import Synchronization
import Testing
@testable import StillwaterLive

/// A task list whose members see who is assigned to each task and whose viewers do not; tokens name
/// the user and their role, and may carry an expiry.
struct Tasks: Codable, Equatable, Sendable {
    var names: [String] = []
    var assignees: [String] = []
}

struct AddTask: Action, Codable, Equatable, Sendable {
    var name: String
    var assignee: String
    func reduce(_ state: inout Tasks) {
        state.names.append(name)
        state.assignees.append(assignee)
    }
}

struct TasksView: LiveView {
    var names: [String]
    var assignees: [String]?
    static let liveFields: [LiveField<TasksView>] = [.value("names", \.names), .value("assignees", \.assignees)]
}

struct TeamUser: Sendable, Equatable {
    var name: String
    var role: Role
    enum Role: String, Hashable, Sendable { case member, viewer }
}

struct TeamProfile: Encodable, Sendable {
    var name: String
    var role: String
}

/// Counts the views a hub asked a service for, by audience.
final class ViewCounts: Sendable {
    private let counts = Mutex<[TeamUser.Role: Int]>([:])
    func add(_ audience: TeamUser.Role) { counts.withLock { $0[audience, default: 0] += 1 } }
    var current: [TeamUser.Role: Int] { counts.withLock { $0 } }
}

/// The wall clock of a test: a fixed time, or the real clock (nil).
final class TestClock: Sendable {
    private let date: Mutex<Date?>
    init(fixed: Date? = Date(timeIntervalSince1970: 1_800_000_000)) { date = Mutex(fixed) }
    var now: Date { date.withLock { $0 } ?? Date() }
}

struct TeamService: LiveService {
    let clock: TestClock
    /// Whether clients are shown in presence frames.
    var showsPresence = false
    /// How many views the hub asked for, by audience.
    let made = ViewCounts()

    func view(of state: Tasks, for audience: TeamUser.Role) -> TasksView {
        made.add(audience)
        return TasksView(names: state.names, assignees: audience == .member ? state.assignees : nil)
    }

    func audience(of identity: TeamUser) -> TeamUser.Role { identity.role }

    func profile(of identity: TeamUser) -> TeamProfile? { TeamProfile(name: identity.name, role: identity.role.rawValue) }

    func presence(of identity: TeamUser) -> TeamProfile? {
        showsPresence ? TeamProfile(name: identity.name, role: identity.role.rawValue) : nil
    }

    func decide(_ command: String, state: Tasks, identity: TeamUser) -> LiveDecision<AddTask> {
        identity.role == .member ? .accept(AddTask(name: command, assignee: identity.name)) : .reject("viewers cannot add tasks")
    }

    /// Tokens are `name:role`, or `name:role:seconds` for credentials that expire that many seconds after
    /// the test clock's now; `bad` is refused.
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<TeamUser> {
        let parts = (handshake.token ?? "").split(separator: ":").map(String.init)
        guard parts.count >= 2, let role = TeamUser.Role(rawValue: parts[1]) else { return .refused("the token was refused") }
        let user = TeamUser(name: parts[0], role: role)
        guard parts.count == 3, let seconds = Double(parts[2]) else { return .accepted(user) }
        return .acceptedUntil(user, expires: clock.now.addingTimeInterval(seconds))
    }
}

/// The client id a connection's welcome gave.
private func clientID(_ connection: LiveConnection<TeamService>) throws -> String {
    try #require(connection.client?.text)
}

private func hello(_ token: String) -> String {
    #"{"type":"hello","protocol":1,"token":"\#(token)"}"#
}

@Suite("Audiences, profiles, expiry and disconnects")
struct LiveAudienceTests {
    let clock = TestClock()

    func makeHub(options: LiveOptions = LiveOptions(), presence: Bool = false) async throws -> LiveHub<TeamService> {
        var options = options
        options.now = { [clock] in clock.now }
        return try await LiveHub.open(TeamService(clock: clock, showsPresence: presence), log: MemoryJournal<LiveLogState<Tasks>, LiveEntry<AddTask>>(),
                                      initial: Tasks(), options: options)
    }

    /// A connection that said `hello` with `token`, and the frames it was written first.
    func join(_ hub: LiveHub<TeamService>, _ token: String) async -> (LiveConnection<TeamService>, [String]) {
        let connection = hub.connect()
        connection.receive(hello(token))
        guard let frames = await connection.nextBatch()?.texts else { return (connection, []) }
        return (connection, frames)
    }

    func frames(_ connection: LiveConnection<TeamService>) async -> [String] {
        var frames: [String] = []
        while connection.queuedFrames > 0, let texts = await connection.nextBatch()?.texts { frames += texts }
        return frames
    }

    @Test("each audience is shown its own view, made once per version and shared by the audience's clients")
    func viewPerAudience() async throws {
        let hub = try await makeHub()
        let (ann, annFirst) = await join(hub, "ann:member")
        let (bob, _) = await join(hub, "bob:member")
        let (cat, catFirst) = await join(hub, "cat:viewer")
        let (dan, _) = await join(hub, "dan:viewer")
        #expect(object(annFirst[1])["view"] as? [String: [String]] == ["names": [], "assignees": []])
        #expect(object(catFirst[1])["view"] as? [String: [String]] == ["names": []])
        let before = hub.service.made.current

        #expect(await hub.perform("paint", as: TeamUser(name: "ann", role: .member)) == .applied(version: 1))
        #expect(await hub.perform("sand", as: TeamUser(name: "bob", role: .member)) == .applied(version: 2))
        hub.tick()
        let members = [await frames(ann), await frames(bob)]
        let viewers = [await frames(cat), await frames(dan)]
        #expect(members[0] == members[1] && viewers[0] == viewers[1])
        #expect(members[0] == [#"{"type":"patch","from":0,"version":2,"set":{"names":["paint","sand"],"assignees":["ann","bob"]}}"#])
        #expect(viewers[0] == [#"{"type":"patch","from":0,"version":2,"set":{"names":["paint","sand"]}}"#])
        // One view per audience for the tick's version: not one per client, nor one per version applied.
        let after = hub.service.made.current
        #expect(after[.member, default: 0] - before[.member, default: 0] == 1)
        #expect(after[.viewer, default: 0] - before[.viewer, default: 0] == 1)
        #expect(hub.view(for: .viewer).assignees == nil)
        #expect(hub.view(for: .member).assignees == ["ann", "bob"])
        // A viewer's command is decided as the viewer.
        #expect(await hub.perform("peek", as: TeamUser(name: "cat", role: .viewer)) == .rejected("viewers cannot add tasks"))
    }

    @Test("an audience the server read before anyone joined it is patched like any other")
    func audienceReadFirst() async throws {
        let hub = try await makeHub()
        _ = await hub.perform("paint", as: TeamUser(name: "ann", role: .member))
        #expect(hub.view(for: .viewer).names == ["paint"])
        let (cat, _) = await join(hub, "cat:viewer")
        _ = await hub.perform("sand", as: TeamUser(name: "ann", role: .member))
        hub.tick()
        #expect(await frames(cat) == [#"{"type":"patch","from":1,"version":2,"set":{"names":["paint","sand"]}}"#])
    }

    @Test("the welcome tells the client who it is and when its credentials expire")
    func welcomeSaysWhoAndUntil() async throws {
        let hub = try await makeHub()
        let (_, plain) = await join(hub, "ann:member")
        #expect(object(plain[0])["you"] as? [String: String] == ["name": "ann", "role": "member"])
        #expect(object(plain[0])["expires"] == nil)
        let (_, expiring) = await join(hub, "bob:viewer:90")
        let expires = try #require(object(expiring[0])["expires"] as? Int)
        #expect(expires == Int(clock.now.timeIntervalSince1970 * 1_000) + 90_000)
        #expect(expiring[0].contains(#""you":{"name":"bob","role":"viewer"}"#))
    }

    @Test("credentials already expired are answered token_expired and 4419 at once; expiring ones end the session with token_expired and 4419")
    func expiry() async throws {
        let hub = try await makeHub()
        let (late, lateFrames) = await join(hub, "ann:member:-1")
        #expect(object(lateFrames[0])["code"] as? String == "token_expired")
        #expect(object(lateFrames[0])["message"] as? String == "the credentials expired: connect again with new ones")
        #expect(await late.nextBatch() == .close(.expired, reason: "token_expired"))

        let (soon, _) = await join(hub, "bob:member:0.2")
        let (lasting, _) = await join(hub, "cat:member")
        let ended = await soon.nextBatch()   // waits for the expiry
        guard let frames = ended?.texts else {
            Issue.record("no error frame before the close: \(String(describing: ended))")
            return
        }
        #expect(object(frames[0])["code"] as? String == "token_expired")
        #expect(await soon.nextBatch() == .close(.expired, reason: "token_expired"))
        #expect(soon.phase == .closed && lasting.phase == .live)
    }

    @Test("a reauth renews the credentials and keeps the connection; a refused one closes it with 4401")
    func reauth() async throws {
        let hub = try await makeHub()
        let (ann, _) = await join(hub, "ann:member:0.3")
        ann.receive(#"{"type":"reauth","ref":5,"token":"ann:member:3600"}"#)
        guard let answers = await ann.nextBatch()?.texts, let answer = answers.first else {
            Issue.record("no answer to the reauth")
            return
        }
        #expect(object(answer)["type"] as? String == "reauthed")
        #expect(object(answer)["ref"] as? Int == 5)
        #expect(object(answer)["expires"] as? Int == Int(clock.now.timeIntervalSince1970 * 1_000) + 3_600_000)
        try await Task.sleep(for: .milliseconds(500))   // past the first expiry
        #expect(ann.phase == .live)
        #expect(await hub.perform("tile", as: TeamUser(name: "ann", role: .member)) == .applied(version: 1))

        ann.receive(#"{"type":"reauth","ref":6,"token":"bad"}"#)
        guard let refused = await ann.nextBatch()?.texts else {
            Issue.record("no answer to the refused reauth")
            return
        }
        #expect(object(refused.last!)["code"] as? String == "unauthorized")
        #expect(object(refused.last!)["ref"] as? Int == 6)
        #expect(await ann.nextBatch() == .close(.unauthorized, reason: "unauthorized"))

        // Before the welcome a reauth is not taken; the connection stays.
        let early = hub.connect()
        early.receive(#"{"type":"reauth","token":"x"}"#)
        #expect(await early.nextBatch() == .frames([LiveFrame(#"{"type":"error","code":"hello_expected","message":"the first frame must be a hello"}"#)]))
    }

    @Test("a reauth into another audience is sent a snapshot of that audience's view")
    func reauthMovesAudience() async throws {
        let hub = try await makeHub()
        _ = await hub.perform("paint", as: TeamUser(name: "ann", role: .member))
        let (ann, first) = await join(hub, "ann:viewer")
        #expect((object(first[1])["view"] as? [String: Any])?["assignees"] == nil)
        ann.receive(#"{"type":"reauth","ref":1,"token":"ann:member"}"#)
        var seen: [String] = []
        while !seen.contains(where: { $0.contains(#""type":"reauthed""#) }) {
            guard let texts = await ann.nextBatch()?.texts else { break }
            seen += texts
        }
        hub.tick()
        let next = await frames(ann)
        #expect(next.count == 1)
        #expect(object(next[0])["type"] as? String == "snapshot")
        #expect((object(next[0])["view"] as? [String: Any])?["assignees"] as? [String] == ["ann"])
        #expect(await hub.perform("sand", as: TeamUser(name: "ann", role: .member)) == .applied(version: 2))
    }

    @Test("disconnect(where:) ends the matching live sessions with disconnected and 4403, and no other")
    func disconnect() async throws {
        let hub = try await makeHub()
        let (ann, _) = await join(hub, "ann:member")
        let (annAgain, _) = await join(hub, "ann:viewer")
        let (bob, _) = await join(hub, "bob:member")
        #expect(hub.disconnect(where: { $0.name == "ann" }, reason: "you left the team") == 2)
        for connection in [ann, annAgain] {
            #expect(await connection.nextBatch()
                == .frames([LiveFrame(#"{"type":"error","code":"disconnected","message":"you left the team"}"#)]))
            #expect(await connection.nextBatch() == .close(.disconnected, reason: "disconnected"))
        }
        #expect(bob.phase == .live)
        #expect(hub.disconnect(where: { $0.name == "ann" }, reason: "again") == 0)
    }

    @Test("presence: the whole list on joining, then joins and leaves once per tick; a client connected twice is one entry")
    func presence() async throws {
        let hub = try await makeHub(presence: true)
        let (ann, _) = await join(hub, "ann:member")
        let annID = try clientID(ann)
        #expect(await frames(ann) == [#"{"type":"presence","state":{"\#(annID)":{"name":"ann","role":"member"}}}"#])
        hub.tick()   // her own join, which she knows of already: applying it again changes nothing
        #expect(await frames(ann) == [#"{"type":"presence","joins":{"\#(annID)":{"name":"ann","role":"member"}}}"#])
        let (bob, _) = await join(hub, "bob:viewer")
        let bobID = try clientID(bob)
        let bobFrames = await frames(bob)
        #expect(bobFrames.count == 1 && (object(bobFrames[0])["state"] as? [String: Any])?.count == 2)
        hub.tick()
        #expect(await frames(ann) == [#"{"type":"presence","joins":{"\#(bobID)":{"name":"bob","role":"viewer"}}}"#])
        _ = await frames(bob)
        // Bob connects again under his id before the old connection closed: still one entry.
        let again = hub.connect()
        again.receive(#"{"type":"hello","protocol":1,"token":"bob:viewer","client":"\#(bobID)"}"#)
        _ = await again.nextBatch()
        _ = await frames(again)
        bob.transportClosed()
        hub.tick()
        #expect(await frames(ann).allSatisfy { !$0.contains("leaves") })
        again.transportClosed()
        hub.tick()
        #expect(await frames(ann) == [#"{"type":"presence","leaves":["\#(bobID)"]}"#])
        // A client that reads slowly holds one presence frame: the whole list replaces the waiting changes.
        let (cat, _) = await join(hub, "cat:member")
        hub.tick()
        let (dan, _) = await join(hub, "dan:member")
        hub.tick()
        let waiting = await frames(ann)
        #expect(waiting.count == 1)
        #expect((object(waiting[0])["state"] as? [String: Any])?.count == 3)
        _ = (cat, dan)
    }

    @Test("presence across two servers: each shows the other's clients while its word holds; a server that dies has its clients leave once its word expires")
    func presenceAcrossServers() async throws {
        let east = try await makeHub(presence: true), west = try await makeHub(presence: true)
        let (ann, _) = await join(east, "ann:member")
        let (bob, _) = await join(west, "bob:viewer")
        let annID = try clientID(ann), bobID = try clientID(bob)
        _ = await frames(ann)
        _ = await frames(bob)
        #expect(east.localPresence == [annID: #"{"name":"ann","role":"member"}"#])
        // One round of the cluster's exchange: each tells the other what it has.
        let now = clock.now
        west.mergePresence(east.localPresence, from: "east", expires: now.addingTimeInterval(15))
        east.mergePresence(west.localPresence, from: "west", expires: now.addingTimeInterval(15))
        east.tick()
        west.tick()
        let annSees = await frames(ann)
        #expect(annSees.count == 1)
        #expect(Set((object(annSees[0])["joins"] as? [String: Any] ?? [:]).keys) == [annID, bobID])
        #expect(await frames(bob).first?.contains(annID) == true)
        // A node's word that is not JSON is left out.
        west.mergePresence(["c000000000000-0000000000000009": "{not json"], from: "broken", expires: now.addingTimeInterval(15))
        west.tick()
        #expect(await frames(bob).isEmpty)
        // West dies: it says nothing more. Before its word expires Bob is still shown; after, he leaves.
        east.expirePresence(now: now.addingTimeInterval(10))
        east.tick()
        #expect(await frames(ann).isEmpty)
        east.expirePresence(now: now.addingTimeInterval(16))
        east.tick()
        #expect(await frames(ann) == [#"{"type":"presence","leaves":["\#(bobID)"]}"#])
        // A server that stops and says so is forgotten at once.
        west.forgetPresence(from: "east")
        west.tick()
        #expect(await frames(bob) == [#"{"type":"presence","leaves":["\#(annID)"]}"#])
    }

    @Test("presence lists at most presenceLimit clients; those beyond it join and leave unlisted")
    func presenceLimit() async throws {
        var options = LiveOptions()
        options.presenceLimit = 2
        let hub = try await makeHub(options: options, presence: true)
        let (ann, _) = await join(hub, "ann:member")
        let (bob, _) = await join(hub, "bob:member")
        let (cat, catFirst) = await join(hub, "cat:member")
        let catList = catFirst.count > 2 ? catFirst[2] : (await frames(cat)).first ?? ""
        #expect(Set(((object(catList)["state"] as? [String: [String: String]]) ?? [:]).values.map { $0["name"] ?? "" }) == ["ann", "bob"])
        hub.tick()
        _ = await frames(ann)
        cat.transportClosed()                    // unlisted: its leaving changes nothing
        hub.tick()
        #expect(await frames(ann).isEmpty)
        let bobID = try clientID(bob)
        bob.transportClosed()
        hub.tick()
        #expect(await frames(ann) == [#"{"type":"presence","leaves":["\#(bobID)"]}"#])
    }

    @Test("a ping is answered by a pong with its ref; before the hello it is a protocol error")
    func ping() async throws {
        let hub = try await makeHub()
        let (ann, _) = await join(hub, "ann:member")
        ann.receive(#"{"type":"ping","ref":9}"#)
        #expect(await ann.nextBatch() == .frames([LiveFrame(#"{"type":"pong","ref":9}"#)]))
        ann.receive(#"{"type":"ping"}"#)
        #expect(await ann.nextBatch() == .frames([LiveFrame(#"{"type":"pong"}"#)]))
        let early = hub.connect()
        early.receive(#"{"type":"ping"}"#)
        #expect(await early.nextBatch() == .frames([LiveFrame(#"{"type":"error","code":"hello_expected","message":"the first frame must be a hello"}"#)]))
        #expect(await early.nextBatch() == .close(.protocolError, reason: "hello_expected"))
    }

    @Test("run() ticks only while a client is behind: an idle hub, with or without clients, schedules nothing")
    func idleRunLoop() async throws {
        let hub = try await makeHub(options: LiveOptions(patchInterval: .milliseconds(1)))
        let runner = Task { await hub.run() }
        defer { runner.cancel() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(hub.shared.ticks == 0)                      // nobody connected: no tick at all
        let (ann, _) = await join(hub, "ann:member")
        try await Task.sleep(for: .milliseconds(100))
        let afterJoin = hub.shared.ticks
        #expect(afterJoin <= 2)                             // at most the tick the admission asked for
        _ = await hub.perform("paint", as: TeamUser(name: "ann", role: .member))
        let patch = await ann.nextBatch()                  // the run loop sends the patch
        #expect(patch.map { if case .frames(let frames) = $0 { frames.first?.text.contains(#""version":1"#) == true } else { false } } == true)
        try await Task.sleep(for: .milliseconds(100))
        let settled = hub.shared.ticks
        try await Task.sleep(for: .milliseconds(200))
        #expect(hub.shared.ticks == settled)                // up to date: no further tick in 200 intervals
        runner.cancel()
        await runner.value                                  // a cancelled run loop returns
    }
}
