import Foundation

/// The client side of the live protocol as a state machine without I/O: fed what arrives and what the
/// clock says, it returns what to do (send a frame, open or close a connection, publish the view, answer
/// a command). ``LiveClient`` holds one and does the work; tests may drive one alone.
///
/// Connections are numbered: an input that names an earlier connection than the current one is ignored,
/// so a late frame or close of a dropped socket never touches the new one.
struct LiveClientMachine<View: LiveView>: Sendable {
    /// One command the server has not answered yet.
    struct Entry: Sendable {
        var cid: String
        /// The command's JSON text.
        var command: String
        /// The frame's `ref` while it is in flight on the current connection.
        var ref: Int?
        /// The command's number under ``LiveClientMachine/client``, given when it is first sent.
        var seq: Int?
        /// When a command refused with `retry` may go again.
        var retryAt: ContinuousClock.Instant?
        var retries = 0
    }

    enum Input: Sendable {
        /// The transport opened connection `connection`.
        case opened(connection: Int)
        /// A text frame of connection `connection`.
        case text(connection: Int, String)
        /// Connection `connection` closed, with the server's close code when it sent one.
        case closed(connection: Int, code: Int?, reason: String)
        /// The time to hear the welcome and view on `connection` is up.
        case helloTimeout(connection: Int)
        /// The backoff after the drop of `connection` is over: connect again.
        case reconnect(after: Int)
        /// Commands held back by a retry may be due.
        case flush
        /// A new command to send.
        case send(cid: String, command: String)
        /// Time to look at `connection`'s silence: ping it, or give it up when a ping went unanswered.
        case heartbeat(connection: Int)
        /// Time to renew the credentials of `connection` (``LiveClientOptions/reauthMargin`` before they expire).
        case renewDue(connection: Int)
        /// The token supplier's answer to ``Effect/fetchToken(number:)`` `number`: a new token, or why
        /// there is none.
        case supplied(number: Int, Result<String, LiveClientError>)
        /// The app's new token (``LiveClient/reauth(token:)`` call `id`).
        case reauth(id: Int, token: String)
        /// The user closed the client.
        case stop
    }

    enum Effect: Sendable {
        case connect(connection: Int)
        case send(connection: Int, String)
        case closeConnection(connection: Int)
        case schedule(Input, after: Duration)
        case view(View?)
        case status(LiveClientStatus)
        case answer(cid: String, Result<LiveOutcome, LiveClientError>)
        /// Something the app should hear of that is no command's answer: a frame the client could not
        /// read, a connection the server ended on an error of its own.
        case problem(LiveClientError)
        /// The id the client numbers its commands under (nil until a welcome gives one).
        case clientID(LiveClientID?)
        /// What the last welcome said of the client (`you`).
        case you(LiveJSONValue?)
        /// When the credentials expire, as the last welcome or `reauthed` said.
        case expires(Date?)
        /// Who is connected to the stream, by client id.
        case presence([LiveClientID: LiveJSONValue])
        /// Ask the token supplier for a new token (request `number`, counted from 1); its answer comes
        /// back as ``Input/supplied(number:_:)``.
        case fetchToken(number: Int)
        /// The answer to ``LiveClient/reauth(token:)`` call `id`: the new expiry, or why not.
        case reauthAnswer(id: Int, Result<Date?, LiveClientError>)
    }

    private enum Phase: Sendable {
        /// Waiting for the backoff to pass.
        case waiting
        /// A connection is open (or opening): `welcomed` once its welcome came, `synced` once its view did.
        case connected(welcomed: Bool, synced: Bool)
        /// Stopped for good.
        case stopped
    }

    /// The token the next hello carries: the first one, or the last one a supplier or ``Input/reauth(id:token:)`` gave.
    private(set) var token: String?
    let params: [String: String]
    let options: LiveClientOptions
    /// Whether a token supplier renews the credentials before they expire and after a close 4419.
    let suppliesTokens: Bool
    /// The wall clock that `expires` is compared with.
    let wallClock: @Sendable () -> Date
    /// When the credentials expire, as the last welcome or `reauthed` said; nil: not while connected.
    private(set) var expires: Date?
    /// Who is connected to the stream, as the presence frames of the current connection said.
    private(set) var presence: [LiveClientID: LiveJSONValue] = [:]
    /// When the current connection last brought a frame (or opened).
    private var lastHeard: ContinuousClock.Instant?
    /// When the unanswered ping on the current connection went out.
    private var pingSentAt: ContinuousClock.Instant?
    /// The `reauth` frames in flight, by `ref`, with the ``Input/reauth(id:token:)`` calls they answer.
    private var reauths: [Int: [Int]] = [:]
    /// ``Input/reauth(id:token:)`` calls whose token goes in a `reauth` frame after the next welcome.
    private var reauthAfterWelcome: [Int] = []
    /// After a close 4419: waiting for the supplier's token before connecting again, with the server's message.
    private var awaitingToken: String?
    /// How many tokens were asked of the supplier: the number of the latest request.
    private var fetches = 0
    private var phase: Phase = .waiting
    private var connection = 0
    private(set) var view: View?
    private(set) var version: Int?
    private var stream: String?
    /// Whether the copy may be resumed from (false once a patch did not fit it).
    private var resumable = false
    private var window = 1
    private var attempt = 0
    private var nextRef = 1
    /// The id the server's welcome gave this client, under which it numbers its commands; nil until a
    /// welcome named one (a server that names none gets commands with their `cid` only).
    private(set) var client: LiveClientID?
    /// The number the next command gets.
    private var nextSeq = 1
    private(set) var queue: [Entry] = []
    /// The last error frame about no command (before the welcome, or `view_unavailable`): the close
    /// that follows says it.
    private var closingError: (code: String, message: String)?
    private(set) var status: LiveClientStatus = .connecting

    init(token: String?, params: [String: String], options: LiveClientOptions, suppliesTokens: Bool = false,
         wallClock: @escaping @Sendable () -> Date = { Date() }) {
        self.token = token
        self.params = params
        self.options = options
        self.suppliesTokens = suppliesTokens
        self.wallClock = wallClock
    }

    /// Whether `id` is the connection the client is opening or has open.
    func isCurrent(_ id: Int) -> Bool {
        guard id == connection, case .connected = phase else { return false }
        return true
    }

    /// Opens the first connection.
    mutating func start() -> [Effect] {
        connect()
    }

    mutating func handle(_ input: Input, now: ContinuousClock.Instant) -> [Effect] {
        switch input {
        case .opened(let id):
            guard id == connection, case .connected = phase else { return [] }
            lastHeard = now
            pingSentAt = nil
            return [.send(connection: id, helloFrame()), .schedule(.heartbeat(connection: id), after: options.pingAfter)]
        case .text(let id, let text):
            guard id == connection, case .connected(let welcomed, _) = phase else { return [] }
            lastHeard = now
            pingSentAt = nil
            return receive(text, welcomed: welcomed, now: now)
        case .closed(let id, let code, let reason):
            guard id == connection, case .connected = phase else { return [] }
            return closed(code: code, reason: reason)
        case .helloTimeout(let id):
            guard id == connection, case .connected(_, synced: false) = phase else { return [] }
            return drop()
        case .reconnect(let id):
            guard id == connection, case .waiting = phase, awaitingToken == nil else { return [] }
            return connect()
        case .flush:
            return flush(now: now)
        case .send(let cid, let command):
            if case .stopped = phase { return [.answer(cid: cid, .failure(stoppedError))] }
            queue.append(Entry(cid: cid, command: command))
            return flush(now: now)
        case .heartbeat(let id):
            guard id == connection, case .connected = phase else { return [] }
            return heartbeat(now: now)
        case .renewDue(let id):
            guard suppliesTokens, id == connection, case .connected(welcomed: true, _) = phase, expires != nil else { return [] }
            return fetchToken()
        case .supplied(let number, let result):
            return supplied(result, latest: number == fetches)
        case .reauth(let id, let token):
            return reauth(id: id, token: token)
        case .stop:
            return stop(.closed)
        }
    }

    // MARK: Connections

    private mutating func connect() -> [Effect] {
        connection += 1
        phase = .connected(welcomed: false, synced: false)
        closingError = nil
        return setStatus(.connecting) + [.connect(connection: connection),
                                         .schedule(.helloTimeout(connection: connection), after: options.helloTimeout)]
    }

    /// Leaves the current connection and schedules the next.
    private mutating func drop() -> [Effect] {
        [.closeConnection(connection: connection)] + lost()
    }

    private mutating func lost() -> [Effect] {
        for index in queue.indices { queue[index].ref = nil }
        // A reauth in flight is answered by the next connection: its hello carries the new token, and
        // a reauth follows the welcome.
        reauthAfterWelcome += reauths.keys.sorted().flatMap { reauths[$0]! }
        reauths.removeAll()
        phase = .waiting
        let delay = options.backoffDelay(attempt: attempt, random: Double.random(in: 0..<1))
        attempt += 1
        return setStatus(.waiting(attempt: attempt)) + clearPresence() + [.schedule(.reconnect(after: connection), after: delay)]
    }

    private mutating func clearPresence() -> [Effect] {
        guard !presence.isEmpty else { return [] }
        presence = [:]
        return [.presence([:])]
    }

    private mutating func closed(code: Int?, reason: String) -> [Effect] {
        let said = closingError
        closingError = nil
        let message = said?.message ?? (reason.isEmpty ? "closed with \(code.map(String.init) ?? "no code")" : reason)
        switch code {
        case LiveCloseCode.unauthorized.rawValue:
            return stop(.refused(message))
        case LiveCloseCode.protocolError.rawValue:
            return stop(.failed(message))
        case LiveCloseCode.disconnected.rawValue:
            return stop(.disconnected(message))
        case LiveCloseCode.expired.rawValue:
            guard suppliesTokens else { return stop(.expired(message)) }
            // Connect again once the supplier gave a token; the backoff's reconnect waits for it.
            awaitingToken = message
            return lost() + fetchToken()
        case LiveCloseCode.serverError.rawValue:
            let error = LiveClientError.serverError(code: said?.code ?? "", message: said?.message ?? reason)
            return [.problem(error)] + lost()
        default:
            return lost()
        }
    }

    private var stoppedError: LiveClientError {
        switch status {
        case .refused(let message): .unauthorized(message)
        case .failed(let message): .protocolError(message)
        case .expired(let message): .expired(message)
        case .disconnected(let message): .disconnected(message)
        default: .closed
        }
    }

    private mutating func stop(_ final: LiveClientStatus) -> [Effect] {
        if case .stopped = phase { return [] }
        var effects: [Effect] = []
        if case .connected = phase { effects.append(.closeConnection(connection: connection)) }
        phase = .stopped
        connection += 1
        effects += setStatus(final)
        let error = stoppedError
        effects += queue.map { .answer(cid: $0.cid, .failure(error)) }
        queue.removeAll()
        let waiters = reauths.keys.sorted().flatMap { reauths[$0]! } + reauthAfterWelcome
        effects += waiters.map { .reauthAnswer(id: $0, .failure(error)) }
        reauths.removeAll()
        reauthAfterWelcome.removeAll()
        awaitingToken = nil
        return effects + clearPresence()
    }

    private mutating func setStatus(_ next: LiveClientStatus) -> [Effect] {
        guard next != status else { return [] }
        status = next
        return [.status(next)]
    }

    private func helloFrame() -> String {
        var json = LiveJSONWriter()
        json.raw(#"{"type":"hello","protocol":"#)
        json.int(liveProtocolVersion)
        if let token {
            json.key("token")
            json.string(token)
        }
        if !params.isEmpty {
            json.key("params")
            json.raw("{")
            for (index, name) in params.keys.sorted().enumerated() {
                json.key(name, first: index == 0)
                json.string(params[name]!)
            }
            json.raw("}")
        }
        if let client {
            json.key("client")
            json.string(client.text)
        }
        if resumable, let stream, let version {
            json.raw(#","resume":{"stream":"#)
            json.string(stream)
            json.raw(#","version":"#)
            json.int(version)
            json.raw("}")
        }
        json.raw("}")
        return json.text
    }

    // MARK: Frames

    private mutating func receive(_ text: String, welcomed: Bool, now: ContinuousClock.Instant) -> [Effect] {
        let frame: LiveServerFrame<View>
        do {
            frame = try JSONDecoder().decode(LiveServerFrame<View>.self, from: Data(text.utf8))
        } catch {
            resumable = false  // a patch the client cannot read leaves its copy behind: ask for a snapshot
            return [.problem(.unreadableFrame(LiveJSON.describe(decoding: error)))] + drop()
        }
        switch frame {
        case .welcome(let protocolVersion, let stream, let window, let client, let you, let expires):
            guard !welcomed else { return [.problem(.unreadableFrame("a second welcome on one connection"))] + drop() }
            guard protocolVersion == liveProtocolVersion else {
                let problem = "the server speaks protocol \(protocolVersion); this client speaks \(liveProtocolVersion)"
                return [.problem(.unreadableFrame(problem))] + drop()
            }
            phase = .connected(welcomed: true, synced: false)
            self.window = max(1, window)
            if stream != self.stream { resumable = false }
            self.expires = expires
            var effects = adopt(client.flatMap(LiveClientID.init)) + [.you(you), .expires(expires)] + renewal()
            if !reauthAfterWelcome.isEmpty, let token {
                effects += sendReauth(token, answering: reauthAfterWelcome)
                reauthAfterWelcome.removeAll()
            }
            return effects + flush(now: now)
        case .reauthed(let ref, let expires):
            guard let ref, let waiters = reauths.removeValue(forKey: ref) else { return [] }
            self.expires = expires
            return [.expires(expires)] + waiters.map { .reauthAnswer(id: $0, .success(expires)) } + renewal()
        case .presence(let state, let joins, let leaves):
            guard welcomed else { return [] }
            var next = state ?? presence
            for (id, entry) in joins { next[id] = entry }
            for id in leaves { next[id] = nil }
            guard next != presence else { return [] }
            presence = next
            return [.presence(next)]
        case .snapshot(let stream, let version, let view):
            guard welcomed else { return drop() }
            self.stream = stream
            return arrived(view, version: version)
        case .patch(let from, let version, let changes):
            guard welcomed, var copy = view, from == self.version else { return drop() }
            do {
                for change in changes { try change.apply(&copy) }
            } catch {
                resumable = false
                return [.problem(.unreadableFrame("the patch to version \(version) does not fit the copy's lists"))] + drop()
            }
            return arrived(copy, version: version)
        case .ack(let ref, let cid, _, let version, let duplicate):
            guard let index = entry(ref: ref, cid: cid) else { return [] }
            let entry = queue.remove(at: index)
            return [.answer(cid: entry.cid, .success(duplicate ? .duplicate(version: version) : .applied(version: version)))]
                + flush(now: now)
        case .error(let code, let message, let ref, let cid, _, let expected, let retry):
            if let ref, let waiters = reauths.removeValue(forKey: ref) {
                // A refused reauth: the close (4401) that follows stops the client.
                closingError = (code, message)
                return waiters.map { .reauthAnswer(id: $0, .failure(.unauthorized(message))) }
            }
            guard let index = entry(ref: ref, cid: cid) else {
                let closing: [LiveErrorCode] = [.viewUnavailable, .tokenExpired, .disconnected, .unauthorized]
                if !welcomed || closing.contains(where: { $0.rawValue == code }) { closingError = (code, message) }
                return []
            }
            if code == LiveErrorCode.clientExpired.rawValue { return expired(message) }
            if code == LiveErrorCode.outOfOrder.rawValue, let expected { renumber(from: expected) }
            if retry {
                queue[index].ref = nil
                queue[index].retryAt = now + options.backoffDelay(attempt: queue[index].retries, random: Double.random(in: 0..<1))
                queue[index].retries += 1
                return flush(now: now)
            }
            let entry = queue.remove(at: index)
            let result: Result<LiveOutcome, LiveClientError> = code == LiveErrorCode.rejected.rawValue
                ? .success(.rejected(message)) : .failure(.refusedFrame(code: code, message: message))
            return [.answer(cid: entry.cid, result)] + flush(now: now)
        case .unknown:
            return []
        }
    }

    private mutating func arrived(_ next: View, version: Int) -> [Effect] {
        view = next
        self.version = version
        resumable = true
        var effects: [Effect] = []
        if case .connected(let welcomed, synced: false) = phase {
            phase = .connected(welcomed: welcomed, synced: true)
            attempt = 0
            effects += setStatus(.live)
        }
        return [.view(next)] + effects
    }

    /// The queued command an answer is about: by its `ref` (the frame in flight now; an answer to a frame
    /// sent before a resend is ignored), else by its `cid`.
    private func entry(ref: Int?, cid: String?) -> Int? {
        if let ref { return queue.firstIndex { $0.ref == ref } }
        if let cid { return queue.firstIndex { $0.cid == cid } }
        return nil
    }

    /// Takes the id a welcome named. A first id is kept; another than the one the client named means
    /// the server does not number under the old one: commands sent under it are answered as refused
    /// (whether they were applied cannot be known), and numbering starts again.
    private mutating func adopt(_ named: LiveClientID?) -> [Effect] {
        guard let named, named != client else { return [] }
        let old = client
        client = named
        nextSeq = 1
        guard old != nil else { return [.clientID(named)] }
        return [.clientID(named)] + failNumbered(.refusedFrame(
            code: "client_changed", message: "the server gave this client a new id; a command sent under the old one may or may not have been applied"))
    }

    /// The server forgot this client: every numbered command is answered `clientExpired` (not applied
    /// now; whether it was long ago cannot be known), and the client connects again without an id.
    private mutating func expired(_ message: String) -> [Effect] {
        client = nil
        nextSeq = 1
        var effects: [Effect] = [.clientID(nil)]
        for entry in queue where entry.seq != nil { effects.append(.answer(cid: entry.cid, .success(.clientExpired(message)))) }
        queue.removeAll { $0.seq != nil }
        return effects + drop()
    }

    /// Answers every numbered command with `error` and forgets it.
    private mutating func failNumbered(_ error: LiveClientError) -> [Effect] {
        let failed = queue.filter { $0.seq != nil }
        queue.removeAll { $0.seq != nil }
        return failed.map { .answer(cid: $0.cid, .failure(error)) }
    }

    /// The server's next number is `expected`. When no queued command holds it (the command that had it
    /// was refused before it was decided, `bad_command` say, so the number was not used), the commands
    /// numbered above it take the numbers from `expected` on, in order: none of them was recorded.
    private mutating func renumber(from expected: Int) {
        guard !queue.contains(where: { $0.seq == expected }) else { return }
        var next = expected
        for index in queue.indices {
            guard let seq = queue[index].seq, seq > expected else { continue }
            queue[index].seq = next
            queue[index].ref = nil
            next += 1
        }
        nextSeq = next
    }

    // MARK: Heartbeats and credentials

    /// Pings a connection quiet for ``LiveClientOptions/pingAfter``, drops one whose ping brought nothing
    /// within ``LiveClientOptions/pongTimeout``, and otherwise looks again when one of them may be due.
    private mutating func heartbeat(now: ContinuousClock.Instant) -> [Effect] {
        if let pingSentAt {
            let waited = now - pingSentAt
            guard waited >= options.pongTimeout else {
                return [.schedule(.heartbeat(connection: connection), after: options.pongTimeout - waited)]
            }
            return drop()
        }
        let quiet = now - (lastHeard ?? now)
        guard quiet >= options.pingAfter else {
            return [.schedule(.heartbeat(connection: connection), after: options.pingAfter - quiet)]
        }
        pingSentAt = now
        return [.send(connection: connection, #"{"type":"ping"}"#),
                .schedule(.heartbeat(connection: connection), after: options.pongTimeout)]
    }

    /// With a token supplier and credentials that expire: a renewal ``LiveClientOptions/reauthMargin``
    /// before `expires`, or halfway there when they last less than twice the margin.
    private func renewal() -> [Effect] {
        guard suppliesTokens, let expires else { return [] }
        let left = Duration.seconds(max(0, expires.timeIntervalSince(wallClock())))
        let margin = options.reauthMargin
        return [.schedule(.renewDue(connection: connection), after: left > margin * 2 ? left - margin : left / 2)]
    }

    private mutating func fetchToken() -> [Effect] {
        fetches += 1
        return [.fetchToken(number: fetches)]
    }

    /// The supplier's token: used to connect again after a close 4419, or (the answer to the latest
    /// request) sent in a `reauth` on a live connection; and kept for every later hello. A failure stops
    /// the client only when it answers the request made after the 4419: an earlier request (a renewal)
    /// may fail while the one made for the reconnect succeeds.
    private mutating func supplied(_ result: Result<String, LiveClientError>, latest: Bool) -> [Effect] {
        if case .stopped = phase { return [] }
        switch result {
        case .success(let next):
            token = next
            if awaitingToken != nil, case .waiting = phase {
                awaitingToken = nil
                return connect()
            }
            guard latest, case .connected(welcomed: true, _) = phase else { return [] }
            return sendReauth(next, answering: [])
        case .failure(let error):
            if latest, let message = awaitingToken, case .waiting = phase {
                return [.problem(error)] + stop(.expired(message))
            }
            // The expiry closes the connection (4419), and the supplier is asked again then.
            return [.problem(error)]
        }
    }

    /// The app's new token: sent in a `reauth` on a live connection; otherwise kept for the next hello
    /// and sent in a `reauth` after its welcome, which answers the call.
    private mutating func reauth(id: Int, token next: String) -> [Effect] {
        if case .stopped = phase { return [.reauthAnswer(id: id, .failure(stoppedError))] }
        token = next
        if case .connected(welcomed: true, _) = phase { return sendReauth(next, answering: [id]) }
        reauthAfterWelcome.append(id)
        if awaitingToken != nil, case .waiting = phase {
            awaitingToken = nil
            return connect()
        }
        return []
    }

    private mutating func sendReauth(_ token: String, answering waiters: [Int]) -> [Effect] {
        let ref = nextRef
        nextRef += 1
        reauths[ref] = waiters
        var json = LiveJSONWriter()
        json.raw(#"{"type":"reauth","ref":"#)
        json.int(ref)
        json.key("token")
        json.string(token)
        json.raw("}")
        return [.send(connection: connection, json.text)]
    }

    /// Sends what is due, at most `window` commands in flight; schedules a flush for the next held back.
    private mutating func flush(now: ContinuousClock.Instant) -> [Effect] {
        guard case .connected(welcomed: true, _) = phase else { return [] }
        var inFlight = queue.count { $0.ref != nil }
        var nextRetry: ContinuousClock.Instant?
        var effects: [Effect] = []
        for index in queue.indices where inFlight < window && queue[index].ref == nil {
            if let at = queue[index].retryAt, at > now {
                nextRetry = min(nextRetry ?? at, at)
                // Numbered commands go in number order: none after one held back.
                if client != nil { break }
                continue
            }
            if client != nil, queue[index].seq == nil {
                queue[index].seq = nextSeq
                nextSeq += 1
            }
            queue[index].ref = nextRef
            queue[index].retryAt = nil
            inFlight += 1
            var json = LiveJSONWriter(capacity: queue[index].command.utf8.count + 64)
            json.raw(#"{"type":"command","ref":"#)
            json.int(nextRef)
            if let seq = queue[index].seq {
                json.raw(#","seq":"#)
                json.int(seq)
            }
            json.raw(#","cid":"#)
            json.string(queue[index].cid)
            json.raw(#","command":"#)
            json.raw(queue[index].command)
            json.raw("}")
            nextRef += 1
            effects.append(.send(connection: connection, json.text))
        }
        if let nextRetry { effects.append(.schedule(.flush, after: nextRetry - now)) }
        return effects
    }
}

/// A frame from the server, decoded for a client of `View`: a patch's members are read with the view's
/// ``LiveView/liveFields`` into changes to apply.
enum LiveServerFrame<View: LiveView>: Decodable {
    case welcome(protocolVersion: Int, stream: String, window: Int, client: String?, you: LiveJSONValue?, expires: Date?)
    case reauthed(ref: Int?, expires: Date?)
    case presence(state: [LiveClientID: LiveJSONValue]?, joins: [LiveClientID: LiveJSONValue], leaves: [LiveClientID])
    case snapshot(stream: String, version: Int, view: View)
    case patch(from: Int, version: Int, changes: [LiveFieldChange<View>])
    case ack(ref: Int?, cid: String?, seq: Int?, version: Int, duplicate: Bool)
    case error(code: String, message: String, ref: Int?, cid: String?, seq: Int?, expected: Int?, retry: Bool)
    /// A type this client does not know (a later protocol's): ignored.
    case unknown(String)

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        func key(_ name: String) -> AnyKey { AnyKey(name) }
        let type = try container.decode(String.self, forKey: key("type"))
        switch type {
        case "welcome":
            self = .welcome(protocolVersion: try container.decode(Int.self, forKey: key("protocol")),
                            stream: try container.decode(String.self, forKey: key("stream")),
                            window: try container.decode(Int.self, forKey: key("window")),
                            client: try container.decodeIfPresent(String.self, forKey: key("client")),
                            you: try container.decodeIfPresent(LiveJSONValue.self, forKey: key("you")),
                            expires: try Self.date(container, key("expires")))
        case "reauthed":
            self = .reauthed(ref: try container.decodeIfPresent(Int.self, forKey: key("ref")), expires: try Self.date(container, key("expires")))
        case "presence":
            self = .presence(state: try container.decodeIfPresent([LiveClientID: LiveJSONValue].self, forKey: key("state")),
                             joins: try container.decodeIfPresent([LiveClientID: LiveJSONValue].self, forKey: key("joins")) ?? [:],
                             leaves: try container.decodeIfPresent([LiveClientID].self, forKey: key("leaves")) ?? [])
        case "snapshot":
            self = .snapshot(stream: try container.decode(String.self, forKey: key("stream")),
                             version: try container.decode(Int.self, forKey: key("version")),
                             view: try container.decode(View.self, forKey: key("view")))
        case "patch":
            var changes: [LiveFieldChange<View>] = []
            for (member, isList) in [("set", false), ("lists", true)] 
                where try container.contains(key(member)) && !container.decodeNil(forKey: key(member)) {
                let members = try container.nestedContainer(keyedBy: AnyKey.self, forKey: key(member))
                for name in members.allKeys {
                    guard let field = View.liveFields.first(where: { $0.name == name.stringValue && $0.isList == isList }) else {
                        throw DecodingError.dataCorruptedError(forKey: name, in: members,
                                                               debugDescription: "\(View.self) has no \(isList ? "list" : "plain") field \"\(name.stringValue)\"")
                    }
                    changes.append(try field.read(members, name))
                }
            }
            self = .patch(from: try container.decode(Int.self, forKey: key("from")),
                          version: try container.decode(Int.self, forKey: key("version")), changes: changes)
        case "ack":
            self = .ack(ref: try container.decodeIfPresent(Int.self, forKey: key("ref")),
                        cid: try container.decodeIfPresent(String.self, forKey: key("cid")),
                        seq: try container.decodeIfPresent(Int.self, forKey: key("seq")),
                        version: try container.decode(Int.self, forKey: key("version")),
                        duplicate: try container.decodeIfPresent(Bool.self, forKey: key("duplicate")) ?? false)
        case "error":
            self = .error(code: try container.decode(String.self, forKey: key("code")),
                          message: try container.decodeIfPresent(String.self, forKey: key("message")) ?? "",
                          ref: try container.decodeIfPresent(Int.self, forKey: key("ref")),
                          cid: try container.decodeIfPresent(String.self, forKey: key("cid")),
                          seq: try container.decodeIfPresent(Int.self, forKey: key("seq")),
                          expected: try container.decodeIfPresent(Int.self, forKey: key("expected")),
                          retry: try container.decodeIfPresent(Bool.self, forKey: key("retry")) ?? false)
        default:
            self = .unknown(type)
        }
    }

    /// A time in milliseconds since 1970, when the member is there.
    private static func date(_ container: KeyedDecodingContainer<AnyKey>, _ key: AnyKey) throws -> Date? {
        try container.decodeIfPresent(Int64.self, forKey: key).map { Date(timeIntervalSince1970: Double($0) / 1_000) }
    }
}
