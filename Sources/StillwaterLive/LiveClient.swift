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
///   stops the client (``LiveClientStatus/refused(_:)``), 4400 too (``LiveClientStatus/failed(_:)``);
///   every other close or failure reconnects.
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

    private let inputs: AsyncStream<Message>.Continuation

    /// Starts a client: it connects at once, and keeps reconnecting until ``close()``.
    ///
    /// - Parameters:
    ///   - transport: How to reach the server.
    ///   - token: The hello frame's `token`, if the server wants one there.
    ///   - params: The hello frame's `params`.
    ///   - options: Timing of reconnects and of the hello.
    public init(transport: some LiveClientTransport, token: String? = nil, params: [String: String] = [:],
                options: LiveClientOptions = LiveClientOptions()) {
        let viewValue = MutableProperty<View?>(nil)
        let statusValue = MutableProperty<LiveClientStatus>(.connecting)
        let errorValue = MutableProperty<LiveClientError?>(nil)
        view = Property(viewValue)
        status = Property(statusValue)
        lastError = Property(errorValue)
        let (stream, inputs) = AsyncStream.makeStream(of: Message.self)
        self.inputs = inputs
        let driver = Driver(machine: LiveClientMachine(token: token, params: params, options: options),
                            transport: transport, inputs: inputs, view: viewValue, status: statusValue, lastError: errorValue)
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
        /// Timer `timer` fired: it is forgotten, and its input handled.
        case fired(timer: Int, LiveClientMachine<View>.Input)
        case countTimers(CheckedContinuation<Int, Never>)
    }

    /// What a timer waits for. The machine acts only on the newest of each kind (an older hello wait or
    /// reconnect names a connection that is gone; the newest retry wait is the earliest due), so a new
    /// one cancels the last.
    private enum TimerKind: Hashable {
        case hello, reconnect, retry, other

        init(_ input: LiveClientMachine<View>.Input) {
            switch input {
            case .helloTimeout: self = .hello
            case .reconnect: self = .reconnect
            case .flush: self = .retry
            default: self = .other
            }
        }
    }

    /// The one place that holds the machine: a task that takes one message at a time, so the machine
    /// needs no lock, and does what the machine says.
    private struct Driver: Sendable {
        var machine: LiveClientMachine<View>
        let transport: any LiveClientTransport
        let inputs: AsyncStream<Message>.Continuation
        let view: MutableProperty<View?>
        let status: MutableProperty<LiveClientStatus>
        let lastError: MutableProperty<LiveClientError?>
        var channel: (connection: Int, LiveClientChannel)?
        var waiting: [String: CheckedContinuation<LiveOutcome, any Error>] = [:]
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
                case .fired(let timer, let input):
                    let kind = TimerKind(input)
                    if timers[kind]?.number == timer { timers[kind] = nil }
                    await perform(machine.handle(input, now: .now))
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
                    view.value = next
                case .status(let next):
                    status.value = next
                    if next.isFinal { cancelTimers() }
                case .answer(let cid, let result):
                    waiting.removeValue(forKey: cid)?.resume(with: result.mapError { $0 as any Error })
                case .problem(let error):
                    lastError.value = error
                }
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
    /// Stopped by ``LiveClient/close()``.
    case closed

    /// Whether the client has stopped for good.
    public var isFinal: Bool {
        switch self {
        case .refused, .failed, .closed: true
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
        case .closed: "the client was closed before the command was answered"
        case .unreadableFrame(let problem): "a frame from the server could not be read: \(problem)"
        case .serverError(let code, let message): "the server closed the connection on an error (\(code.isEmpty ? "1011" : code)): \(message)"
        }
    }
}

/// How a ``LiveClient`` times its reconnects and its wait for a view.
public struct LiveClientOptions: Sendable, Equatable {
    /// The delay before the first reconnect; it doubles with each failed attempt.
    public var backoffInitial: Duration
    /// The longest delay between attempts.
    public var backoffMax: Duration
    /// The spread of each delay: a delay *d* becomes a random one in [*d* · (1 − jitter), *d* · (1 + jitter)).
    public var jitter: Double
    /// How long a new connection may take to bring a welcome and a view before it is dropped and tried again.
    public var helloTimeout: Duration

    /// Creates options; the defaults are 0.5 s doubling up to 10 s, ±20 %, and 10 s for the hello.
    public init(backoffInitial: Duration = .milliseconds(500), backoffMax: Duration = .seconds(10),
                jitter: Double = 0.2, helloTimeout: Duration = .seconds(10)) {
        precondition(jitter >= 0 && jitter < 1, "LiveClientOptions(jitter:) must be in [0, 1), not \(jitter)")
        self.backoffInitial = backoffInitial
        self.backoffMax = backoffMax
        self.jitter = jitter
        self.helloTimeout = helloTimeout
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
