import Foundation
import Stillwater

/// A copy of a remote ``LiveHub``'s view, kept current as a local `Property`, and a way to send it
/// commands: a command-line program or another server binds to a remote store as if it were local.
///
/// The client opens a connection through its ``LiveClientTransport``, says hello with its token and
/// parameters, and from then on keeps ``view`` equal to the server's view: the snapshot, then each
/// patch (plain fields replaced, list fields patched through the view's ``LiveView/liveFields``).
/// ``send(_:)`` numbers each command under the id the server gave the client and waits for the server's
/// answer.
///
/// ```swift
/// import StillwaterLive
///
/// struct CounterView: LiveView {
///     var count: Int
///     static let liveFields: [LiveField<CounterView>] = [.value("count", \.count)]
/// }
/// func watch(_ transport: some LiveClientTransport) async throws {
///     let client = LiveClient<CounterView, Int>(transport: transport, token: "secret")
///     let subscription = client.view.observe { view in print(view.map { "count \($0.count)" } ?? "no view yet") }
///     let outcome = try await client.send(3)   // .applied(version: 1), once the log holds it
///     print(outcome)
///     subscription.cancel()
///     await client.close()
/// }
/// ```
///
/// Guarantees:
///
/// - **The view is the server's.** A snapshot replaces it; a patch is applied only when its `from` is
///   the copy's version, and a list patch only when it fits the list. Otherwise the client drops the
///   connection, reconnects and resumes (from its version, or with a snapshot when a list did not fit).
///   ``view`` is set once per applied frame, from one task, in order.
/// - **Commands are applied once and not lost while the client lives.** The first welcome gives the
///   client an id, which it names in every later hello; each command gets the next number under it
///   (`seq`: 1, 2, 3, …) when it is first sent, and keeps it. Commands wait in memory while the client is
///   disconnected and are sent after every welcome, in number order, at most the server's window at
///   once; one refused with `retry` (`window_full`, `unavailable`, `out_of_order`) is sent again after a
///   delay with its number, and none after it goes first, so the server answers a resent command it
///   already recorded as a duplicate however late it comes, instead of applying it again. A server that
///   forgot the client answers ``LiveOutcome/clientExpired(_:)``: the client's numbered commands are
///   answered so and the client starts again with a new id. The queue is memory only: a command whose
///   program ends before its answer may or may not have been applied.
/// - **Reconnects back off**, from ``LiveClientOptions/backoffInitial`` doubling up to
///   ``LiveClientOptions/backoffMax``, with jitter; the count restarts once a view arrives. Close 4401
///   stops the client (``LiveClientStatus/refused(_:)``), 4400 too (``LiveClientStatus/failed(_:)``), and
///   4403 (``LiveClientStatus/disconnected(_:)``); 4419 stops it (``LiveClientStatus/expired(_:)``) unless
///   a token supplier gives a new token to connect with; every other close or failure reconnects.
/// - **A silent connection is noticed.** After ``LiveClientOptions/pingAfter`` without a frame the
///   client sends a `ping`; when nothing arrives within ``LiveClientOptions/pongTimeout`` after it, it
///   drops the connection, reconnects and resumes.
/// - **Credentials are renewed before they expire** when the client has a token supplier (the
///   `refreshToken` of ``init(transport:token:params:options:refreshToken:)``): it is asked
///   ``LiveClientOptions/reauthMargin`` before ``expires`` and its token goes in a `reauth` frame; the
///   app may also call ``reauth(token:)`` itself.
/// - **Nothing the server sends makes it trap.** A frame it cannot read, or a patch that does not fit,
///   drops the connection and reconnects for a snapshot; that and a close on a server error (1011) are
///   told in ``lastError``.
/// - Observers of ``view`` and ``status`` run on the client's own task, never under a lock.
///
/// The client stops when ``close()`` is called or when it is deinitialized.
///
/// - Complexity: Each patch costs the decoding of the members it carries, and for a list the apply of
///   its `ListPatch`: O(*n*) in the list's length.
public final class LiveClient<View: LiveView, Command: Encodable & Sendable>: Sendable {
    /// The server's view, as of the last applied frame; nil until the first snapshot.
    public let view: Property<View?>
    /// Where the connection is: connecting, live, waiting to reconnect, or stopped and why.
    public let status: Property<LiveClientStatus>
    /// The last problem that was no command's answer, nil until one came: a frame from the server the
    /// client could not read (``LiveClientError/unreadableFrame(_:)``), or a connection the server ended
    /// on an error of its own (``LiveClientError/serverError(code:message:)``). The client has already
    /// dropped that connection and reconnects; this says why, for the app to show or log.
    public let lastError: Property<LiveClientError?>
    /// What the server tells the client about itself (the welcome's `you`: its user's name, its role), as
    /// the server's app chooses; nil until a welcome carried it.
    ///
    /// Its shape is the app's, so it is kept as JSON: decode it into the app's own type where it is read,
    /// `try client.you.value?.decode(Profile.self)`. Each welcome replaces it (a reconnect under new
    /// credentials may change it).
    public let you: Property<LiveJSONValue?>
    /// When the client's credentials expire, as the last welcome or `reauthed` frame said; nil until a
    /// welcome came, or when they do not expire while connected.
    ///
    /// At that time the server closes the connection (4419), unless a `reauth` renewed them: with a
    /// token supplier the client does that itself, ``LiveClientOptions/reauthMargin`` ahead.
    public let expires: Property<Date?>
    /// Who is connected to the same stream (room) now, by client id, with what the server's app says of
    /// each (a name, a colour), the client's own entry included; empty while disconnected, and from a
    /// server that shows no presence.
    ///
    /// Entries are kept as JSON, since their shape is the app's: decode each into the app's own type,
    /// `client.presence.value.mapValues { try $0.decode(Person.self) }`. Find the client's own entry
    /// under ``clientID``. The list is replaced by each presence frame's `state` and changed by its
    /// `joins` and `leaves` (applying one twice changes nothing); it is set only when it changed, and
    /// emptied when the connection drops (the next connection's `state` fills it again).
    public let presence: Property<[LiveClientID: LiveJSONValue]>
    /// The id the server gave this client, under which it numbers its commands and is listed in
    /// ``presence``; nil until the first welcome.
    public let clientID: Property<LiveClientID?>

    private let inputs: AsyncStream<Message>.Continuation

    /// Starts a client: it connects at once, and keeps reconnecting until ``close()``.
    ///
    /// ```swift
    /// import StillwaterLive
    ///
    /// struct NoteView: LiveView {
    ///     var text: String
    ///     static let liveFields: [LiveField<NoteView>] = [.value("text", \.text)]
    /// }
    /// func open(_ transport: some LiveClientTransport, login: @escaping @Sendable () async throws -> String) async throws {
    ///     let client = LiveClient<NoteView, String>(transport: transport, token: try await login(), refreshToken: login)
    ///     print(client.status.value)   // connecting; renewed before each expiry, reconnected after a 4419
    ///     await client.close()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - transport: How to reach the server.
    ///   - token: The hello frame's `token`, if the server wants one there.
    ///   - params: The hello frame's `params`.
    ///   - options: Timing of reconnects, of the hello, of heartbeats and of renewals.
    ///   - refreshToken: Supplies a new token, nil when credentials are not renewed. With it, the client
    ///     asks for a token ``LiveClientOptions/reauthMargin`` before ``expires`` and sends it in a
    ///     `reauth` frame (keeping the connection), and after a close 4419 asks for one and connects
    ///     with it. A token it supplies is also used by every later hello. When it throws, the error is
    ///     told in ``lastError`` (``LiveClientError/tokenUnavailable(_:)``); after a 4419 the client
    ///     then stops (``LiveClientStatus/expired(_:)``) when the call made for the reconnect threw.
    ///     Calls never overlap: one asked for while another runs starts once it returned.
    public init(transport: some LiveClientTransport, token: String? = nil, params: [String: String] = [:],
                options: LiveClientOptions = LiveClientOptions(),
                refreshToken: (@Sendable () async throws -> String)? = nil) {
        let viewValue = MutableProperty<View?>(nil)
        let statusValue = MutableProperty<LiveClientStatus>(.connecting)
        let errorValue = MutableProperty<LiveClientError?>(nil)
        let outputs = Outputs(view: viewValue, status: statusValue, lastError: errorValue)
        view = Property(viewValue)
        status = Property(statusValue)
        lastError = Property(errorValue)
        you = Property(outputs.you)
        expires = Property(outputs.expires)
        presence = Property(outputs.presence)
        clientID = Property(outputs.clientID)
        let (stream, inputs) = AsyncStream.makeStream(of: Message.self)
        self.inputs = inputs
        let machine = LiveClientMachine<View>(token: token, params: params, options: options, suppliesTokens: refreshToken != nil)
        let driver = Driver(machine: machine, transport: transport, refreshToken: refreshToken, inputs: inputs, outputs: outputs)
        Task { [driver] in
            var driver = driver
            await driver.run(stream)
        }
    }

    deinit {
        inputs.yield(.input(.stop))
        inputs.finish()
    }

    /// Sends a command, and returns the server's answer once it came.
    ///
    /// The command is queued with a new client id and sent at once when connected, else after the next
    /// welcome; a resend after a reconnect keeps the id, so it is applied once.
    ///
    /// - Returns: ``LiveOutcome/applied(version:)`` (the view shows it from that version on),
    ///   ``LiveOutcome/duplicate(version:)`` or ``LiveOutcome/rejected(_:)``.
    /// - Throws: An `EncodingError` when the command does not encode; ``LiveClientError`` when the server
    ///   refused the frame itself (``LiveClientError/refusedFrame(code:message:)``) or the client stopped
    ///   before an answer came. Cancelling the calling task does not withdraw the command.
    public func send(_ command: Command) async throws -> LiveOutcome {
        let json = try LiveJSON.text(of: command)
        let cid = Self.makeCID()
        return try await withCheckedThrowingContinuation { continuation in
            if case .terminated = inputs.yield(.send(cid: cid, command: json, continuation)) {
                continuation.resume(throwing: LiveClientError.closed)
            }
        }
    }

    /// Renews the client's credentials with `token`, and returns once the server accepted it, with when
    /// the new credentials expire (nil: not while connected).
    ///
    /// On a live connection the token goes in a `reauth` frame at once, and the connection goes on under
    /// it. Otherwise it is kept for the next hello and sent in a `reauth` after its welcome. Either way
    /// every later hello carries it.
    ///
    /// - Throws: ``LiveClientError/unauthorized(_:)`` with the server's message when it refused the
    ///   token (it then closes with 4401 and the client stops: ``LiveClientStatus/refused(_:)``), or the
    ///   error of the stop when the client stopped before an answer came.
    @discardableResult
    public func reauth(token: String) async throws -> Date? {
        try await withCheckedThrowingContinuation { continuation in
            if case .terminated = inputs.yield(.reauth(token: token, continuation)) {
                continuation.resume(throwing: LiveClientError.closed)
            }
        }
    }

    /// Closes the connection and stops reconnecting; commands not answered yet fail with
    /// ``LiveClientError/closed``. Returns once the client has stopped.
    public func close() async {
        await withCheckedContinuation { continuation in
            if case .terminated = inputs.yield(.close(continuation)) { continuation.resume() }
        }
    }

    /// How many timers the client holds (waits for a reconnect, a hello, a retry): those neither fired
    /// nor cancelled. For tests.
    func pendingTimers() async -> Int {
        await withCheckedContinuation { continuation in
            if case .terminated = inputs.yield(.countTimers(continuation)) { continuation.resume(returning: 0) }
        }
    }

    /// A client id: 22 characters of base64url from 16 random bytes.
    static func makeCID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SystemRandomNumberGenerator()
        return String((0..<22).map { _ in alphabet[Int(generator.next() % 64)] })
    }

    fileprivate enum Message: Sendable {
        case input(LiveClientMachine<View>.Input)
        case opened(connection: Int, LiveClientChannel)
        case send(cid: String, command: String, CheckedContinuation<LiveOutcome, any Error>)
        case close(CheckedContinuation<Void, Never>)
        case reauth(token: String, CheckedContinuation<Date?, any Error>)
        /// The token supplier answered request `number`.
        case supplied(number: Int, Result<String, LiveClientError>)
        /// Timer `timer` fired: it is forgotten, and its input handled.
        case fired(timer: Int, LiveClientMachine<View>.Input)
        case countTimers(CheckedContinuation<Int, Never>)
    }

    /// What a timer waits for. The machine acts only on the newest of each kind (an older hello wait or
    /// reconnect names a connection that is gone; the newest retry wait is the earliest due), so a new
    /// one cancels the last.
    private enum TimerKind: Hashable {
        case hello, reconnect, retry, heartbeat, renewal, other

        init(_ input: LiveClientMachine<View>.Input) {
            switch input {
            case .helloTimeout: self = .hello
            case .reconnect: self = .reconnect
            case .flush: self = .retry
            case .heartbeat: self = .heartbeat
            case .renewDue: self = .renewal
            default: self = .other
            }
        }
    }

    /// The properties the driver sets.
    private struct Outputs: Sendable {
        let view: MutableProperty<View?>
        let status: MutableProperty<LiveClientStatus>
        let lastError: MutableProperty<LiveClientError?>
        let you = MutableProperty<LiveJSONValue?>(nil)
        let expires = MutableProperty<Date?>(nil)
        let presence = MutableProperty<[LiveClientID: LiveJSONValue]>([:])
        let clientID = MutableProperty<LiveClientID?>(nil)
    }

    /// The one place that holds the machine: a task that takes one message at a time, so the machine
    /// needs no lock, and does what the machine says.
    private struct Driver: Sendable {
        var machine: LiveClientMachine<View>
        let transport: any LiveClientTransport
        let refreshToken: (@Sendable () async throws -> String)?
        let inputs: AsyncStream<Message>.Continuation
        let outputs: Outputs
        var channel: (connection: Int, LiveClientChannel)?
        var waiting: [String: CheckedContinuation<LiveOutcome, any Error>] = [:]
        /// The ``reauth(token:)`` calls not answered yet, by number.
        var reauths: [Int: CheckedContinuation<Date?, any Error>] = [:]
        var lastReauth = 0
        /// Whether a call of the token supplier is running (one at a time).
        var fetching = false
        /// The request asked for while a call was running: made once it returned.
        var queuedFetch: Int?
        /// The timers neither fired nor cancelled: at most one of each kind, since a new one supersedes
        /// the last (a new connection's hello wait, the next reconnect, the earliest retry). Each is
        /// removed as it fires and all when the client stops, so they never pile up over reconnects.
        var timers: [TimerKind: (number: Int, task: Task<Void, Never>)] = [:]
        var lastTimer = 0

        mutating func run(_ messages: AsyncStream<Message>) async {
            await perform(machine.start())
            for await message in messages {
                switch message {
                case .input(let input):
                    await perform(machine.handle(input, now: .now))
                case .opened(let connection, let opened):
                    // A connection given up while it was opening (timed out, the client closed) is closed.
                    guard machine.isCurrent(connection) else {
                        await opened.close()
                        continue
                    }
                    channel = (connection, opened)
                    await perform(machine.handle(.opened(connection: connection), now: .now))
                case .send(let cid, let command, let continuation):
                    waiting[cid] = continuation
                    await perform(machine.handle(.send(cid: cid, command: command), now: .now))
                case .close(let continuation):
                    await perform(machine.handle(.stop, now: .now))
                    continuation.resume()
                case .reauth(let token, let continuation):
                    lastReauth += 1
                    reauths[lastReauth] = continuation
                    await perform(machine.handle(.reauth(id: lastReauth, token: token), now: .now))
                case .fired(let timer, let input):
                    let kind = TimerKind(input)
                    if timers[kind]?.number == timer { timers[kind] = nil }
                    await perform(machine.handle(input, now: .now))
                case .supplied(let number, let result):
                    fetching = false
                    await perform(machine.handle(.supplied(number: number, result), now: .now))
                    if let next = queuedFetch {
                        queuedFetch = nil
                        fetch(next)
                    }
                case .countTimers(let continuation):
                    continuation.resume(returning: timers.count)
                }
                // Closed: take no new message, but answer the ones already waiting in the stream.
                if case .closed = machine.status { inputs.finish() }
            }
            // Ended by close() or deinit: nothing waits any more.
            await perform(machine.handle(.stop, now: .now))
            cancelTimers()
            inputs.finish()
            for (_, continuation) in waiting { continuation.resume(throwing: LiveClientError.closed) }
            waiting.removeAll()
            for (_, continuation) in reauths { continuation.resume(throwing: LiveClientError.closed) }
            reauths.removeAll()
        }

        private mutating func perform(_ effects: [LiveClientMachine<View>.Effect]) async {
            for effect in effects {
                switch effect {
                case .connect(let connection):
                    open(connection)
                case .send(let connection, let text):
                    guard let channel, channel.connection == connection else { continue }
                    do {
                        try await channel.1.send(text)
                    } catch {
                        inputs.yield(.input(.closed(connection: connection, code: nil, reason: "the send failed: \(error)")))
                    }
                case .closeConnection(let connection):
                    guard let channel, channel.connection == connection else { continue }
                    self.channel = nil
                    await channel.1.close()
                case .schedule(let input, let delay):
                    lastTimer += 1
                    let timer = lastTimer, inputs = self.inputs
                    let task = Task {
                        try? await Task.sleep(for: delay)
                        if !Task.isCancelled { inputs.yield(.fired(timer: timer, input)) }
                    }
                    timers.updateValue((timer, task), forKey: TimerKind(input))?.task.cancel()
                case .view(let next):
                    outputs.view.value = next
                case .status(let next):
                    outputs.status.value = next
                    if next.isFinal { cancelTimers() }
                case .answer(let cid, let result):
                    waiting.removeValue(forKey: cid)?.resume(with: result.mapError { $0 as any Error })
                case .problem(let error):
                    outputs.lastError.value = error
                case .clientID(let id):
                    outputs.clientID.value = id
                case .you(let you):
                    if outputs.you.value != you { outputs.you.value = you }
                case .expires(let expires):
                    if outputs.expires.value != expires { outputs.expires.value = expires }
                case .presence(let presence):
                    outputs.presence.value = presence
                case .fetchToken(let number):
                    fetch(number)
                case .reauthAnswer(let id, let result):
                    reauths.removeValue(forKey: id)?.resume(with: result.mapError { $0 as any Error })
                }
            }
        }

        /// Calls the token supplier for request `number` in a task of its own, one call at a time (a request
        /// made while one runs waits for it); its answer comes back as a message.
        private mutating func fetch(_ number: Int) {
            guard let refreshToken else { return }
            guard !fetching else {
                queuedFetch = number
                return
            }
            fetching = true
            let inputs = inputs
            Task {
                let result: Result<String, LiveClientError>
                do {
                    result = .success(try await refreshToken())
                } catch {
                    result = .failure(.tokenUnavailable("\(error)"))
                }
                inputs.yield(.supplied(number: number, result))
            }
        }

        private mutating func cancelTimers() {
            for timer in timers.values { timer.task.cancel() }
            timers.removeAll()
        }

        /// Opens connection `connection` in a task of its own, which then forwards what arrives.
        private func open(_ connection: Int) {
            let transport = transport, inputs = inputs
            Task {
                let channel: LiveClientChannel
                do {
                    channel = try await transport.connect()
                } catch {
                    inputs.yield(.input(.closed(connection: connection, code: nil, reason: "could not connect: \(error)")))
                    return
                }
                if case .terminated = inputs.yield(.opened(connection: connection, channel)) {
                    await channel.close()
                    return
                }
                for await event in channel.incoming {
                    switch event {
                    case .text(let text):
                        inputs.yield(.input(.text(connection: connection, text)))
                    case .closed(let code, let reason):
                        inputs.yield(.input(.closed(connection: connection, code: code, reason: reason)))
                        return
                    }
                }
                inputs.yield(.input(.closed(connection: connection, code: nil, reason: "the connection ended")))
            }
        }
    }
}

/// Where a ``LiveClient``'s connection is.
public enum LiveClientStatus: Sendable, Equatable {
    /// Opening a connection, or waiting for its welcome and first view.
    case connecting
    /// Welcomed, with a view that patches keep current.
    case live
    /// Disconnected; the next attempt (counted since the last view) comes after a delay.
    case waiting(attempt: Int)
    /// Stopped for good: the server refused the credentials (close 4401), with its message.
    case refused(String)
    /// Stopped for good: the server closed with a protocol error (4400), with its message.
    case failed(String)
    /// Stopped for good: the server ended the session (4403, error `disconnected`: access was withdrawn),
    /// with its message. Connect again only when the user asks to.
    case disconnected(String)
    /// Stopped for good: the credentials expired (4419, error `token_expired`) and the client has no
    /// token supplier, or its supplier gave no token; with the server's message. Connect again with new
    /// credentials.
    case expired(String)
    /// Stopped by ``LiveClient/close()``.
    case closed

    /// Whether the client has stopped for good.
    public var isFinal: Bool {
        switch self {
        case .refused, .failed, .disconnected, .expired, .closed: true
        case .connecting, .live, .waiting: false
        }
    }
}

/// Why ``LiveClient/send(_:)`` got no outcome.
public enum LiveClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server refused the command frame itself (`bad_command`, `malformed`, `too_large`, …), with
    /// the error frame's code and message; nothing changed.
    case refusedFrame(code: String, message: String)
    /// The client stopped because the server refused its credentials (close 4401); the command was not sent
    /// again.
    case unauthorized(String)
    /// The client stopped on a protocol error (close 4400).
    case protocolError(String)
    /// The client stopped because the server ended the session (close 4403), with its message.
    case disconnected(String)
    /// The client stopped because its credentials expired (close 4419) and no new token came, with the
    /// server's message.
    case expired(String)
    /// The token supplier threw (its error, in words): the credentials were not renewed. Told in
    /// ``LiveClient/lastError``.
    case tokenUnavailable(String)
    /// The client was closed before the command was answered: it may or may not have been applied.
    case closed
    /// A frame from the server that the client could not read or apply (not one of the protocol's
    /// shapes, a view or patch that does not decode as the client's view type, a patch that does not fit,
    /// a welcome for another protocol version or a second one), with where, in the protocol's words. The client dropped the connection and reconnects (asking for a snapshot when
    /// the frame was a view or a patch).
    case unreadableFrame(String)
    /// The server ended the connection on an error of its own (close 1011), with the error frame's code
    /// and message when one came (`view_unavailable`: the view the client needs does not encode). The
    /// client reconnects after a delay.
    case serverError(code: String, message: String)

    /// The reason in one line.
    public var description: String {
        switch self {
        case .refusedFrame(let code, let message): "the server refused the command frame (\(code)): \(message)"
        case .unauthorized(let message): "the server refused the credentials: \(message)"
        case .protocolError(let message): "the server closed on a protocol error: \(message)"
        case .disconnected(let message): "the server ended the session: \(message)"
        case .expired(let message): "the credentials expired: \(message)"
        case .tokenUnavailable(let problem): "no new token: \(problem)"
        case .closed: "the client was closed before the command was answered"
        case .unreadableFrame(let problem): "a frame from the server could not be read: \(problem)"
        case .serverError(let code, let message): "the server closed the connection on an error (\(code.isEmpty ? "1011" : code)): \(message)"
        }
    }
}

/// How a ``LiveClient`` times its reconnects, its wait for a view, its heartbeats and the renewal of its
/// credentials.
public struct LiveClientOptions: Sendable, Equatable {
    /// The delay before the first reconnect; it doubles with each failed attempt.
    public var backoffInitial: Duration
    /// The longest delay between attempts.
    public var backoffMax: Duration
    /// The spread of each delay: a delay *d* becomes a random one in [*d* · (1 − jitter), *d* · (1 + jitter)).
    public var jitter: Double
    /// How long a new connection may take to bring a welcome and a view before it is dropped and tried again.
    public var helloTimeout: Duration
    /// How long a connection may bring no frame at all before the client sends a `ping`.
    public var pingAfter: Duration
    /// How long after a `ping` the client waits for any frame before it drops the connection, reconnects
    /// and resumes.
    public var pongTimeout: Duration
    /// How long before the credentials expire the client's token supplier is asked for a new token
    /// (halfway to the expiry instead, when the credentials last less than twice this).
    public var reauthMargin: Duration

    /// Creates options; the defaults are 0.5 s doubling up to 10 s, ±20 %, 10 s for the hello, a ping
    /// after 25 s of silence answered within 10 s (as the protocol's "Heartbeats" says), and a renewal
    /// 60 s before the credentials expire.
    public init(backoffInitial: Duration = .milliseconds(500), backoffMax: Duration = .seconds(10),
                jitter: Double = 0.2, helloTimeout: Duration = .seconds(10), pingAfter: Duration = .seconds(25),
                pongTimeout: Duration = .seconds(10), reauthMargin: Duration = .seconds(60)) {
        precondition(jitter >= 0 && jitter < 1, "LiveClientOptions(jitter:) must be in [0, 1), not \(jitter)")
        self.backoffInitial = backoffInitial
        self.backoffMax = backoffMax
        self.jitter = jitter
        self.helloTimeout = helloTimeout
        self.pingAfter = pingAfter
        self.pongTimeout = pongTimeout
        self.reauthMargin = reauthMargin
    }

    /// The delay before reconnect attempt `attempt` (0 for the first), for `random` in [0, 1).
    ///
    /// ```swift
    /// let options = LiveClientOptions()
    /// print(options.backoffDelay(attempt: 0, random: 0.5), options.backoffDelay(attempt: 9, random: 0.5))
    /// // Prints "0.5 seconds 10.0 seconds"
    /// ```
    public func backoffDelay(attempt: Int, random: Double) -> Duration {
        let doubled = backoffInitial * (1 << min(max(attempt, 0), 30))
        let base = min(backoffMax, doubled)
        return base * (1 - jitter + 2 * jitter * random)
    }
}
