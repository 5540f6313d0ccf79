import Foundation
import Testing
@testable import StillwaterLive

/// The client's state machine driven alone: frames and times in, effects out, no task and no waiting.
@Suite("LiveClientMachine: identity, presence, heartbeats, credentials")
struct LiveClientMachineTests {
    typealias Machine = LiveClientMachine<BoardView>
    static let id = "c018bcfe56800-0123456789abcdef"
    static let other = "c018bcfe56a11-00000000000000ff"
    static let snapshot = LiveClientScriptedTests.snapshot
    /// The wall clock of these tests: expiries are counted from it.
    static let wallNow = Date(timeIntervalSince1970: 1_800_000_000)

    let start = ContinuousClock.now

    static func welcome(you: String? = nil, expires: Date? = nil) -> String {
        var text = #"{"type":"welcome","protocol":1,"stream":"s-5f0c1e2d3c4b5a69","window":64,"client":"\#(id)""#
        if let you { text += #","you":\#(you)"# }
        if let expires { text += #","expires":\#(Int64(expires.timeIntervalSince1970 * 1_000))"# }
        return text + "}"
    }

    func machine(token: String? = "s3cret", supplies: Bool = false,
                 options: LiveClientOptions = LiveClientOptions(reauthMargin: .seconds(60))) -> Machine {
        Machine(token: token, params: [:], options: options, suppliesTokens: supplies, wallClock: { Self.wallNow })
    }

    /// A machine whose first connection is open and has its welcome (with `welcome`) and snapshot.
    func live(_ machine: inout Machine, welcome: String = Self.welcome()) -> [Machine.Effect] {
        _ = machine.start()
        var effects = machine.handle(.opened(connection: 1), now: start)
        effects += machine.handle(.text(connection: 1, welcome), now: start)
        effects += machine.handle(.text(connection: 1, Self.snapshot), now: start)
        return effects
    }

    func sent(_ effects: [Machine.Effect]) -> [String] {
        effects.compactMap { if case .send(_, let text) = $0 { text } else { nil } }
    }

    func scheduled(_ effects: [Machine.Effect]) -> [(Machine.Input, Duration)] {
        effects.compactMap { if case .schedule(let input, let delay) = $0 { (input, delay) } else { nil } }
    }

    func heartbeatDelays(_ effects: [Machine.Effect]) -> [Duration] {
        scheduled(effects).compactMap { if case .heartbeat = $0.0 { $0.1 } else { nil } }
    }

    func renewalDelays(_ effects: [Machine.Effect]) -> [Duration] {
        scheduled(effects).compactMap { if case .renewDue = $0.0 { $0.1 } else { nil } }
    }

    func presence(_ effects: [Machine.Effect]) -> [[LiveClientID: LiveJSONValue]] {
        effects.compactMap { if case .presence(let list) = $0 { list } else { nil } }
    }

    func json(_ text: String) throws -> LiveJSONValue {
        try JSONDecoder().decode(LiveJSONValue.self, from: Data(text.utf8))
    }

    func answers(_ effects: [Machine.Effect]) -> [Int: Result<Date?, LiveClientError>] {
        var answers: [Int: Result<Date?, LiveClientError>] = [:]
        for case .reauthAnswer(let id, let result) in effects { answers[id] = result }
        return answers
    }

    // MARK: you and expires

    @Test("the welcome's you, expires and client id are published")
    func welcomeIdentity() throws {
        var machine = machine()
        let expires = Self.wallNow.addingTimeInterval(90)
        let effects = live(&machine, welcome: Self.welcome(you: #"{"role":"member","name":"Ann"}"#, expires: expires))
        let you = effects.compactMap { if case .you(let value) = $0 { value } else { nil } }
        #expect(you.map(\.text) == [#"{"name":"Ann","role":"member"}"#])
        #expect(try you.first?.decode([String: String].self) == ["name": "Ann", "role": "member"])
        let expiries = effects.compactMap { if case .expires(let value) = $0 { value } else { nil } }
        #expect(expiries == [expires])
        let ids = effects.compactMap { if case .clientID(let value) = $0 { value } else { nil } }
        #expect(ids == [LiveClientID(Self.id)])
        // Without a token supplier nothing is renewed.
        #expect(renewalDelays(effects).isEmpty)
    }

    // MARK: Closes

    @Test("a refused token stops the client with the server's message alone")
    func refusedMessage() {
        var machine = machine()
        _ = machine.start()
        _ = machine.handle(.opened(connection: 1), now: start)
        _ = machine.handle(.text(connection: 1, #"{"type":"error","code":"unauthorized","message":"the token was refused"}"#), now: start)
        _ = machine.handle(.closed(connection: 1, code: 4401, reason: "unauthorized"), now: start)
        #expect(machine.status == .refused("the token was refused"))
    }

    @Test("close 4403 stops the client with the server's reason and fails its commands with it")
    func disconnected() {
        var machine = machine()
        _ = live(&machine)
        _ = machine.handle(.text(connection: 1, #"{"type":"error","code":"disconnected","message":"you left the team"}"#), now: start)
        let effects = machine.handle(.closed(connection: 1, code: 4403, reason: "disconnected"), now: start)
            + machine.handle(.send(cid: "a", command: "1"), now: start)
        #expect(machine.status == .disconnected("you left the team"))
        let failures = effects.compactMap { if case .answer(_, .failure(let error)) = $0 { error } else { nil } }
        #expect(failures == [.disconnected("you left the team")])
        #expect(!effects.contains { if case .connect = $0 { true } else { false } })
    }

    @Test("close 4419 without a token supplier stops the client as expired")
    func expiredWithoutSupplier() {
        var machine = machine()
        _ = live(&machine)
        _ = machine.handle(.text(connection: 1, #"{"type":"error","code":"token_expired","message":"the credentials expired"}"#), now: start)
        let effects = machine.handle(.closed(connection: 1, code: 4419, reason: "token_expired"), now: start)
        #expect(machine.status == .expired("the credentials expired"))
        #expect(!effects.contains { if case .fetchToken = $0 { true } else { false } })
    }

    @Test("close 4419 with a token supplier asks it for a token and connects with it, not before")
    func expiredWithSupplier() {
        var machine = machine(supplies: true)
        _ = live(&machine)
        let effects = machine.handle(.closed(connection: 1, code: 4419, reason: "token_expired"), now: start)
        #expect(effects.contains { if case .fetchToken(number: 1) = $0 { true } else { false } })
        // The backoff's reconnect waits for the token.
        #expect(machine.handle(.reconnect(after: 1), now: start).isEmpty)
        let reconnect = machine.handle(.supplied(number: 1, .success("n3w")), now: start)
        #expect(reconnect.contains { if case .connect(connection: 2) = $0 { true } else { false } })
        let hello = sent(machine.handle(.opened(connection: 2), now: start))
        #expect(hello.first?.contains(#""token":"n3w""#) == true)
        #expect(machine.status == .connecting)
    }

    @Test("close 4419 while a renewal's request runs: its failure is told, the request made for the reconnect decides")
    func expiredDuringRenewal() {
        var machine = machine(supplies: true)
        _ = live(&machine, welcome: Self.welcome(expires: Self.wallNow.addingTimeInterval(30)))
        #expect(machine.handle(.renewDue(connection: 1), now: start).contains { if case .fetchToken(number: 1) = $0 { true } else { false } })
        let closed = machine.handle(.closed(connection: 1, code: 4419, reason: "token_expired"), now: start)
        #expect(closed.contains { if case .fetchToken(number: 2) = $0 { true } else { false } })
        let late = machine.handle(.supplied(number: 1, .failure(.tokenUnavailable("slow"))), now: start)
        #expect(late.contains { if case .problem(.tokenUnavailable("slow")) = $0 { true } else { false } })
        #expect(!machine.status.isFinal)
        let reconnect = machine.handle(.supplied(number: 2, .success("n3w")), now: start)
        #expect(reconnect.contains { if case .connect(connection: 2) = $0 { true } else { false } })
    }

    @Test("close 4419 when the supplier throws: the client stops as expired and tells why")
    func expiredSupplierFails() {
        var machine = machine(supplies: true)
        _ = live(&machine)
        _ = machine.handle(.closed(connection: 1, code: 4419, reason: "token_expired"), now: start)
        let effects = machine.handle(.supplied(number: 1, .failure(.tokenUnavailable("offline"))), now: start)
        #expect(effects.contains { if case .problem(.tokenUnavailable("offline")) = $0 { true } else { false } })
        #expect(machine.status == .expired("token_expired"))
    }

    // MARK: Reauth

    @Test("with a supplier, the renewal comes the margin before the expiry and sends a reauth; reauthed moves the expiry")
    func renewal() throws {
        var machine = machine(supplies: true)
        let effects = live(&machine, welcome: Self.welcome(expires: Self.wallNow.addingTimeInterval(300)))
        #expect(renewalDelays(effects) == [.seconds(240)])
        let fetch = machine.handle(.renewDue(connection: 1), now: start)
        #expect(fetch.contains { if case .fetchToken(number: 1) = $0 { true } else { false } })
        let reauth = try #require(sent(machine.handle(.supplied(number: 1, .success("n3w")), now: start)).first)
        #expect(object(reauth)["type"] as? String == "reauth" && object(reauth)["token"] as? String == "n3w")
        let ref = try #require(object(reauth)["ref"] as? Int)
        let renewed = Self.wallNow.addingTimeInterval(3_600)
        let answer = machine.handle(.text(connection: 1, #"{"type":"reauthed","ref":\#(ref),"expires":\#(Int64(renewed.timeIntervalSince1970 * 1_000))}"#), now: start)
        #expect(machine.expires == renewed)
        #expect(answer.contains { if case .expires(renewed) = $0 { true } else { false } })
        #expect(renewalDelays(answer) == [.seconds(3_540)])
        // Credentials shorter than twice the margin are renewed halfway.
        var other = self.machine(supplies: true)
        #expect(renewalDelays(live(&other, welcome: Self.welcome(expires: Self.wallNow.addingTimeInterval(80)))) == [.seconds(40)])
        // The next hello carries the supplied token.
        _ = machine.handle(.closed(connection: 1, code: 1001, reason: ""), now: start)
        _ = machine.handle(.reconnect(after: 1), now: start)
        #expect(sent(machine.handle(.opened(connection: 2), now: start)).first?.contains(#""token":"n3w""#) == true)
    }

    @Test("reauth(token:) on a live connection is answered by its reauthed, or fails when refused")
    func reauthCall() throws {
        var machine = machine()
        _ = live(&machine)
        let frame = try #require(sent(machine.handle(.reauth(id: 7, token: "n3w"), now: start)).first)
        let ref = try #require(object(frame)["ref"] as? Int)
        let accepted = machine.handle(.text(connection: 1, #"{"type":"reauthed","ref":\#(ref)}"#), now: start)
        #expect(try answers(accepted)[7]?.get() == .some(nil))
        let second = try #require(sent(machine.handle(.reauth(id: 8, token: "bad"), now: start)).first)
        let secondRef = try #require(object(second)["ref"] as? Int)
        let refused = machine.handle(.text(connection: 1, #"{"type":"error","code":"unauthorized","message":"the token was refused","ref":\#(secondRef)}"#), now: start)
        #expect(throws: LiveClientError.unauthorized("the token was refused")) { try answers(refused)[8]?.get() }
        _ = machine.handle(.closed(connection: 1, code: 4401, reason: "unauthorized"), now: start)
        #expect(machine.status == .refused("the token was refused"))
    }

    @Test("reauth(token:) while disconnected: the next hello carries the token and a reauth after its welcome answers")
    func reauthOffline() throws {
        var machine = machine()
        _ = live(&machine)
        _ = machine.handle(.closed(connection: 1, code: nil, reason: "gone"), now: start)
        #expect(sent(machine.handle(.reauth(id: 3, token: "n3w"), now: start)).isEmpty)
        _ = machine.handle(.reconnect(after: 1), now: start)
        #expect(sent(machine.handle(.opened(connection: 2), now: start)).first?.contains(#""token":"n3w""#) == true)
        let afterWelcome = sent(machine.handle(.text(connection: 2, Self.welcome()), now: start))
        let reauth = try #require(afterWelcome.first { $0.contains(#""type":"reauth""#) })
        let ref = try #require(object(reauth)["ref"] as? Int)
        let answer = machine.handle(.text(connection: 2, #"{"type":"reauthed","ref":\#(ref)}"#), now: start)
        #expect(answers(answer)[3] != nil)
        // A reauth pending when the client stops fails with the stop.
        _ = machine.handle(.reauth(id: 4, token: "x"), now: start)
        #expect(throws: LiveClientError.closed) { try answers(machine.handle(.stop, now: start))[4]?.get() }
    }

    // MARK: Presence

    @Test("presence: state replaces, joins and leaves change, a repeated join or a leave of nobody changes nothing, a drop clears")
    func presenceFrames() throws {
        var machine = machine()
        _ = live(&machine)
        let ann = try #require(LiveClientID(Self.id)), bob = try #require(LiveClientID(Self.other))
        let state = machine.handle(.text(connection: 1, #"{"type":"presence","state":{"\#(Self.id)":{"name":"Ann"}}}"#), now: start)
        #expect(presence(state) == [[ann: try json(#"{"name":"Ann"}"#)]])
        let join = #"{"type":"presence","joins":{"\#(Self.other)":{"name":"Bob"}}}"#
        #expect(presence(machine.handle(.text(connection: 1, join), now: start)).first?.count == 2)
        #expect(machine.handle(.text(connection: 1, join), now: start).isEmpty, "applying a join twice changes nothing")
        let leave = #"{"type":"presence","leaves":["\#(Self.other)"]}"#
        #expect(presence(machine.handle(.text(connection: 1, leave), now: start)) == [[ann: try json(#"{"name":"Ann"}"#)]])
        #expect(machine.handle(.text(connection: 1, leave), now: start).isEmpty, "a leave of one not listed changes nothing")
        let replaced = machine.handle(.text(connection: 1, #"{"type":"presence","state":{"\#(Self.other)":{"name":"Bob"}}}"#), now: start)
        #expect(presence(replaced) == [[bob: try json(#"{"name":"Bob"}"#)]])
        let dropped = machine.handle(.closed(connection: 1, code: nil, reason: "gone"), now: start)
        #expect(presence(dropped) == [[:]])
        #expect(machine.presence.isEmpty)
    }

    @Test("a presence entry under something that is no client id makes the frame unreadable")
    func presenceBadID() {
        var machine = machine()
        _ = live(&machine)
        let effects = machine.handle(.text(connection: 1, #"{"type":"presence","state":{"ann":{}}}"#), now: start)
        #expect(effects.contains { if case .problem(.unreadableFrame) = $0 { true } else { false } })
        #expect(machine.presence.isEmpty)
    }

    // MARK: Heartbeats

    @Test("heartbeats: a ping after pingAfter of silence; any frame within pongTimeout keeps the connection, none drops it")
    func heartbeats() throws {
        var machine = machine(options: LiveClientOptions(pingAfter: .seconds(25), pongTimeout: .seconds(10)))
        _ = machine.start()
        #expect(heartbeatDelays(machine.handle(.opened(connection: 1), now: start)) == [.seconds(25)])
        _ = machine.handle(.text(connection: 1, Self.welcome()), now: start)
        _ = machine.handle(.text(connection: 1, Self.snapshot), now: start + .seconds(5))
        // Due at 25 s after the open, but a frame came at 5 s: look again at 30 s, no ping.
        let early = machine.handle(.heartbeat(connection: 1), now: start + .seconds(25))
        #expect(sent(early).isEmpty && heartbeatDelays(early) == [.seconds(5)])
        let ping = machine.handle(.heartbeat(connection: 1), now: start + .seconds(30))
        #expect(sent(ping) == [#"{"type":"ping"}"#] && heartbeatDelays(ping) == [.seconds(10)])
        // The pong (any frame) comes: the next ping is 25 s after it.
        _ = machine.handle(.text(connection: 1, #"{"type":"pong"}"#), now: start + .seconds(31))
        let quiet = machine.handle(.heartbeat(connection: 1), now: start + .seconds(40))
        #expect(sent(quiet).isEmpty && heartbeatDelays(quiet) == [.seconds(16)])
        let second = machine.handle(.heartbeat(connection: 1), now: start + .seconds(56))
        #expect(sent(second) == [#"{"type":"ping"}"#])
        // Nothing arrives: 10 s after the ping the connection is dropped and a reconnect scheduled.
        let dropped = machine.handle(.heartbeat(connection: 1), now: start + .seconds(66))
        #expect(dropped.contains { if case .closeConnection(connection: 1) = $0 { true } else { false } })
        #expect(scheduled(dropped).contains { if case .reconnect(after: 1) = $0.0 { true } else { false } })
        #expect(machine.status == .waiting(attempt: 1))
        // A late heartbeat of the dropped connection does nothing.
        #expect(machine.handle(.heartbeat(connection: 1), now: start + .seconds(100)).isEmpty)
    }
}
