import Foundation
import Stillwater
import StillwaterLive
import Synchronization
import Testing

typealias TeamClient = LiveClient<TasksView, String>
typealias TeamTransport = InProcessTransport<TeamService>

/// A hub of `TeamService` on the real clock, patched every interval as a server runs it.
struct ServedTeam {
    let hub: LiveHub<TeamService>
    let ticker: Task<Void, Never>

    static func make(presence: Bool = false) async throws -> ServedTeam {
        let hub = try await LiveHub.open(TeamService(clock: TestClock(fixed: nil), showsPresence: presence),
                                         log: MemoryJournal<LiveLogState<Tasks>, LiveEntry<AddTask>>(), initial: Tasks())
        return ServedTeam(hub: hub, ticker: Task { await hub.run() })
    }

    func stop() async {
        ticker.cancel()
        await hub.close()
    }
}

/// Hands out tokens in order and counts the calls; a `nil` throws.
final class TokenSupplier: Sendable {
    struct Unavailable: Error, CustomStringConvertible {
        var description: String { "the login server is down" }
    }

    private let tokens: Mutex<[String?]>
    private let count = Mutex(0)

    init(_ tokens: [String?]) { self.tokens = Mutex(tokens) }

    var calls: Int { count.withLock { $0 } }

    @Sendable func next() async throws -> String {
        count.withLock { $0 += 1 }
        let token = tokens.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let token else { throw Unavailable() }
        return token
    }
}

struct Profile: Decodable, Equatable {
    var name: String
    var role: String
}

@Suite("LiveClient: who it is, who is here, heartbeats and credentials, against a hub", .timeLimit(.minutes(5)))
struct LiveClientAccessTests {
    @Test("the client shows the welcome's you, decoded as the app's type, and its expiry")
    func youAndExpires() async throws {
        let served = try await ServedTeam.make()
        let before = Date()
        let client = TeamClient(transport: TeamTransport(hub: served.hub), token: "ann:member:90", options: quickOptions)
        #expect(await eventually { client.status.value == .live })
        let after = Date()
        #expect(try client.you.value?.decode(Profile.self) == Profile(name: "ann", role: "member"))
        // 90 s after the token was checked, in whole milliseconds: between the start and now, plus 90 s.
        let expires = try #require(client.expires.value)
        #expect(expires.timeIntervalSince(before) > 89.99 && expires.timeIntervalSince(after) <= 90)
        #expect(client.clientID.value != nil)
        await client.close()
        await served.stop()
    }

    @Test("presence lists every client by id, the client's own included; a leave removes one; a drop empties it")
    func presence() async throws {
        let served = try await ServedTeam.make(presence: true)
        let annTransport = TeamTransport(hub: served.hub)
        let ann = TeamClient(transport: annTransport, token: "ann:member", options: quickOptions)
        let bob = TeamClient(transport: TeamTransport(hub: served.hub), token: "bob:viewer", options: quickOptions)
        #expect(await eventually { ann.presence.value.count == 2 && bob.presence.value.count == 2 })
        let annID = try #require(ann.clientID.value), bobID = try #require(bob.clientID.value)
        #expect(try ann.presence.value[annID]?.decode(Profile.self) == Profile(name: "ann", role: "member"))
        #expect(try ann.presence.value[bobID]?.decode(Profile.self) == Profile(name: "bob", role: "viewer"))
        #expect(ann.presence.value == bob.presence.value)
        await bob.close()
        #expect(await eventually { ann.presence.value.keys.sorted(by: { $0.text < $1.text }) == [annID] })
        annTransport.setOffline(true)
        annTransport.dropCurrent()
        #expect(await eventually { if case .waiting = ann.status.value { true } else { false } })
        #expect(ann.presence.value.isEmpty)
        annTransport.setOffline(false)
        #expect(await eventually { ann.presence.value.keys.contains(annID) })
        await ann.close()
        await served.stop()
    }

    @Test("reauth(token:) renews the credentials on the same connection; a refused one throws and stops the client")
    func reauth() async throws {
        let served = try await ServedTeam.make()
        let transport = TeamTransport(hub: served.hub)
        // Credentials for 5 s: room for a machine loaded by the sanitizers to connect and renew first.
        let client = TeamClient(transport: transport, token: "ann:member:5", options: quickOptions)
        #expect(await eventually { client.status.value == .live })
        let first = try #require(client.expires.value)
        let expires = try #require(try await client.reauth(token: "ann:member:3600"))
        #expect(expires.timeIntervalSinceNow > 3_500)
        #expect(client.expires.value == expires)
        let pastFirst = first.timeIntervalSinceNow + 0.2
        if pastFirst > 0 { try await Task.sleep(for: .seconds(pastFirst)) }   // past the first expiry
        #expect(client.status.value == .live && transport.connectionCount == 1)
        #expect(try await client.send("paint") == .applied(version: 1))
        await #expect(throws: LiveClientError.unauthorized("the token was refused")) { try await client.reauth(token: "bad") }
        #expect(await eventually { client.status.value == .refused("the token was refused") })
        await served.stop()
    }

    @Test("with a token supplier the client renews ahead of the expiry and keeps its connection")
    func renewsAhead() async throws {
        let served = try await ServedTeam.make()
        let transport = TeamTransport(hub: served.hub)
        let supplier = TokenSupplier(["ann:member:3600"])
        var options = quickOptions
        options.reauthMargin = .seconds(6)
        // Credentials for 8 s, shorter than twice the margin: renewed halfway, about 4 s before they expire
        // (room for a slow machine, the thread sanitizer's under a full suite, to get the reauth through).
        let client = TeamClient(transport: transport, token: "ann:member:8", options: options, refreshToken: supplier.next)
        #expect(await eventually { client.expires.value != nil })
        let first = try #require(client.expires.value)
        #expect(await eventually { (client.expires.value?.timeIntervalSinceNow ?? 0) > 3_500 })
        #expect(supplier.calls == 1)
        let pastFirst = first.timeIntervalSinceNow + 0.2
        if pastFirst > 0 { try await Task.sleep(for: .seconds(pastFirst)) }
        #expect(client.status.value == .live && transport.connectionCount == 1)
        #expect(transport.sentFrames.contains { $0.contains(#""type":"reauth""#) && $0.contains("ann:member:3600") })
        await client.close()
        await served.stop()
    }

    @Test("close 4419: without a supplier the client stops as expired, with the server's message")
    func expiresWithoutSupplier() async throws {
        let served = try await ServedTeam.make()
        let transport = TeamTransport(hub: served.hub)
        let client = TeamClient(transport: transport, token: "ann:member:1", options: quickOptions)
        #expect(await eventually { client.status.value.isFinal })
        guard case .expired(let message) = client.status.value else {
            Issue.record("not expired: \(client.status.value)")
            return
        }
        #expect(message.hasPrefix("the credentials expired"))
        await #expect(throws: LiveClientError.expired(message)) { try await client.send("paint") }
        try await Task.sleep(for: .milliseconds(100))
        #expect(transport.connectionCount == 1)
        await served.stop()
    }

    @Test("close 4419 with a supplier whose renewal failed: it is asked again and the client reconnects with its token")
    func expiresWithSupplier() async throws {
        let served = try await ServedTeam.make()
        let transport = TeamTransport(hub: served.hub)
        let supplier = TokenSupplier([nil, "ann:member:3600"])
        // Credentials for 5 s: the renewal (halfway) fails well before the expiry, even on a machine loaded
        // by the sanitizers; the supplier is then asked again at the close 4419.
        let client = TeamClient(transport: transport, token: "ann:member:5", options: quickOptions, refreshToken: supplier.next)
        #expect(await eventually { transport.connectionCount == 2 && client.status.value == .live })
        #expect(supplier.calls == 2)
        #expect(client.lastError.value == .tokenUnavailable("the login server is down"))
        #expect(transport.sentFrames.filter { $0.contains(#""type":"hello""#) }.last?.contains("ann:member:3600") == true)
        #expect(try await client.send("paint") == .applied(version: 1))
        await client.close()
        await served.stop()
    }

    @Test("close 4403 stops the client with the reason the server gave, and it does not reconnect")
    func disconnected() async throws {
        let served = try await ServedTeam.make()
        let transport = TeamTransport(hub: served.hub)
        let client = TeamClient(transport: transport, token: "ann:member", options: quickOptions)
        #expect(await eventually { client.status.value == .live })
        #expect(served.hub.disconnect(where: { $0.name == "ann" }, reason: "you left the team") == 1)
        #expect(await eventually { client.status.value == .disconnected("you left the team") })
        try await Task.sleep(for: .milliseconds(100))
        #expect(transport.connectionCount == 1)
        await served.stop()
    }

    @Test("heartbeats against a hub: pings after the quiet time are answered, and the connection stays")
    func heartbeats() async throws {
        let served = try await ServedTeam.make()
        let transport = TeamTransport(hub: served.hub)
        var options = quickOptions
        options.pingAfter = .milliseconds(50)
        options.pongTimeout = .seconds(5)   // a loaded machine may take long to answer; no answer is tested below
        let client = TeamClient(transport: transport, token: "ann:member", options: options)
        #expect(await eventually { transport.sentFrames.filter { $0 == #"{"type":"ping"}"# }.count >= 3 })
        #expect(transport.receivedFrames.contains(#"{"type":"pong"}"#))
        #expect(transport.connectionCount == 1 && client.status.value == .live)
        await client.close()
        await served.stop()
    }
}

@Suite("LiveClient heartbeats against a silent server", .timeLimit(.minutes(5)))
struct LiveClientHeartbeatTests {
    @Test("a ping that brings nothing back drops the connection; the client reconnects and resumes")
    func silentServer() async throws {
        let transport = ScriptedTransport()
        var options = quickOptions
        options.pingAfter = .milliseconds(50)
        options.pongTimeout = .milliseconds(50)
        let client = BoardClient(transport: transport, token: "s3cret", options: options)
        try #require(await eventually { transport.connectionCount == 1 && !transport.sent(on: 0).isEmpty })
        transport.serve(0, [LiveClientScriptedTests.welcome, LiveClientScriptedTests.snapshot])
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect(transport.sent(on: 0).contains(#"{"type":"ping"}"#))
        #expect((object(transport.sent(on: 1)[0])["resume"] as? [String: Any])?["version"] as? Int == 41)
        await client.close()
    }
}
