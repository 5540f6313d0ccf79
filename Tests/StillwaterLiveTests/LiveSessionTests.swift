import Foundation
import StillwaterLive
import Testing

@Suite("LiveSession")
struct LiveSessionTests {
    typealias Session = LiveSession<BoardCommand, String>

    func hello(_ session: inout Session, ref: Int? = nil) -> [Session.Effect] {
        session.receive(.hello(LiveHello(token: "good", ref: ref)))
    }

    func frames(_ session: inout Session) -> [String] {
        guard let texts = session.takeBatch()?.texts else { return [] }
        return texts
    }

    func admitted(limits: LiveLimits = LiveLimits()) -> Session {
        var session = Session(limits: limits)
        _ = hello(&session)
        session.authenticated(as: "ann", stream: "s-1", sync: "SNAPSHOT", version: 3)
        _ = session.takeBatch()
        return session
    }

    @Test("a hello asks for the credentials to be checked, with what the transport saw")
    func helloAsksForCheck() {
        var session = Session(transport: ["origin": "https://example.com"])
        let effects = session.receive(.hello(LiveHello(token: "t", params: ["team": "a"], resume: LiveResume(stream: "s", version: 2))))
        guard case .authenticate(let handshake, let resume)? = effects.first else {
            Issue.record("no check asked for")
            return
        }
        #expect(handshake == LiveHandshake(token: "t", params: ["team": "a"], transport: ["origin": "https://example.com"]))
        #expect(resume == LiveResume(stream: "s", version: 2))
        #expect(session.phase == .authenticating)
    }

    @Test("an admitted client gets its welcome and first view, then the commands it sent meanwhile are submitted")
    func admittedClient() {
        var session = Session(limits: LiveLimits(window: 4))
        _ = hello(&session)
        #expect(session.receive(.command(LiveCommandRequest(command: .add(text: "a"), ref: 1))).isEmpty)
        let effects = session.authenticated(as: "ann", stream: "s-1", sync: "SNAPSHOT", version: 3)
        #expect(session.phase == .live)
        #expect(session.version == 3)
        let written = frames(&session)
        #expect(written.count == 2)
        #expect(object(written[0])["type"] as? String == "welcome")
        #expect(object(written[0])["window"] as? Int == 4)
        #expect(written[1] == "SNAPSHOT")
        guard case .submit(let request, let identity)? = effects.first else {
            Issue.record("the held command was not submitted")
            return
        }
        #expect(request.ref == 1)
        #expect(identity == "ann")
    }

    @Test("a refused client gets an unauthorized error and the close 4401")
    func refused() {
        var session = Session()
        _ = hello(&session)
        session.refused("the token was refused")
        let written = frames(&session)
        #expect(object(written[0])["code"] as? String == "unauthorized")
        #expect(session.takeBatch() == .close(.unauthorized, reason: "unauthorized"))
        #expect(session.phase == .closed)
        #expect(session.takeBatch() == nil)
    }

    @Test("a first frame that is not a hello is a protocol error (4400), with the frame's ref")
    func commandBeforeHello() {
        var session = Session()
        _ = session.receive(.command(LiveCommandRequest(command: .add(text: "a"), ref: 5)))
        let written = frames(&session)
        #expect(object(written[0])["code"] as? String == "hello_expected")
        #expect(object(written[0])["ref"] as? Int == 5)
        #expect(session.takeBatch() == .close(.protocolError, reason: "hello_expected"))
    }

    @Test("a hello of another protocol version closes with 4400")
    func unsupportedProtocol() {
        var session = Session()
        _ = session.receive(.hello(LiveHello(protocolVersion: 2, ref: 1)))
        #expect(object(frames(&session)[0])["code"] as? String == "unsupported_protocol")
        #expect(session.takeBatch() == .close(.protocolError, reason: "unsupported_protocol"))
    }

    @Test("no hello in time closes with 4408; the timer is ignored once live")
    func helloTimeout() {
        var waiting = Session()
        waiting.helloTimedOut()
        #expect(object(frames(&waiting)[0])["code"] as? String == "hello_timeout")
        #expect(waiting.takeBatch() == .close(.helloTimeout, reason: "hello_timeout"))
        var live = admitted()
        live.helloTimedOut()
        #expect(live.phase == .live)
        #expect(live.takeBatch() == nil)
    }

    @Test("a command beyond the window gets window_full with its ref; a place comes back when its answer is taken")
    func window() {
        var session = admitted(limits: LiveLimits(window: 2))
        let first = LiveCommandRequest<BoardCommand>(command: .add(text: "a"), ref: 1)
        #expect(session.receive(.command(first)).count == 1)
        #expect(session.receive(.command(LiveCommandRequest(command: .add(text: "b"), ref: 2))).count == 1)
        #expect(session.receive(.command(LiveCommandRequest(command: .add(text: "c"), ref: 3, cid: "c3"))).isEmpty)
        let refused = object(frames(&session)[0])
        #expect(refused["code"] as? String == "window_full")
        #expect(refused["ref"] as? Int == 3)
        #expect(refused["cid"] as? String == "c3")
        #expect(refused["retry"] as? Bool == true)
        session.answered(first, with: .applied(version: 4))
        // Answered, not yet taken: the place is still held.
        #expect(session.receive(.command(LiveCommandRequest(command: .add(text: "d"), ref: 4))).isEmpty)
        let written = frames(&session)
        #expect(written.map { object($0)["type"] as? String } == ["ack", "error"])
        #expect(session.receive(.command(LiveCommandRequest(command: .add(text: "e"), ref: 5))).count == 1)
    }

    @Test("answers: ack with ref, cid and version; duplicates marked; refusals and unavailable as errors")
    func answers() {
        var session = admitted()
        let request = LiveCommandRequest<BoardCommand>(command: .add(text: "a"), ref: 1, cid: "x")
        for _ in 0..<4 { _ = session.receive(.command(request)) }
        session.answered(request, with: .applied(version: 4))
        session.answered(request, with: .duplicate(version: 4))
        session.answered(request, with: .rejected("no"))
        session.answered(request, with: .unavailable("later"))
        let written = frames(&session).map(object)
        #expect(written[0]["type"] as? String == "ack" && written[0]["version"] as? Int == 4 && written[0]["cid"] as? String == "x")
        #expect(written[0]["duplicate"] == nil)
        #expect(written[1]["duplicate"] as? Bool == true)
        #expect(written[2]["code"] as? String == "rejected" && written[2]["ref"] as? Int == 1)
        #expect(written[3]["code"] as? String == "unavailable" && written[3]["retry"] as? Bool == true)
    }

    @Test("a patch is not queued while the last one waits; the next covers every version since")
    func onePatchWaiting() {
        var session = admitted()
        #expect(session.wantsSync(head: 5) == 3)
        let queued = session.sync("P3-5", from: 3, to: 5)
        #expect(queued)
        #expect(session.wantsSync(head: 7) == nil)
        let queuedWhileWaiting = session.sync("P5-7", from: 5, to: 7)
        #expect(!queuedWhileWaiting)
        #expect(frames(&session) == ["P3-5"])
        #expect(session.wantsSync(head: 7) == 5)
        let queuedFromStale = session.sync("P3-7", from: 3, to: 7)
        #expect(!queuedFromStale)
    }

    @Test("a client that sends and never reads is closed with 4429 once its outbox is full, and the outbox is dropped")
    func tooSlow() {
        var session = admitted(limits: LiveLimits(window: 2, maxQueuedFrames: 8))
        for _ in 0..<20 { session.receiveBinary() }
        #expect(session.queuedFrames == 0)
        #expect(session.phase == .closing)
        #expect(session.takeBatch() == .close(.tooSlow, reason: "the client read too slowly"))
    }

    @Test("invalid frames get error frames and the session stays live")
    func invalidWhileLive() {
        var session = admitted()
        session.receive(invalid: LiveFrameError(.malformed, "not a JSON object", ref: 2))
        session.receiveBinary()
        let written = frames(&session).map(object)
        #expect(written[0]["ref"] as? Int == 2)
        #expect(written[1]["code"] as? String == "binary")
        #expect(session.phase == .live)
    }

    @Test("a shutdown writes what waits, then closes with 1001; a closed transport drops everything")
    func shutdown() {
        var session = admitted()
        session.receiveBinary()
        session.shutDown()
        #expect(frames(&session).count == 1)
        #expect(session.takeBatch() == .close(.goingAway, reason: "the server is shutting down"))
        var other = admitted()
        other.receiveBinary()
        other.transportClosed()
        #expect(other.takeBatch() == nil)
        #expect(other.phase == .closed)
    }

    @Test("limits that cannot work stop the program, naming the argument")
    func badLimits() async {
        await #expect(processExitsWith: .failure) { _ = LiveLimits(window: 0) }
    }
}
