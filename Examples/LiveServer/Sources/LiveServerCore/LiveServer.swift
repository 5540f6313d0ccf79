import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import Stillwater
import ServiceLifecycle
import Synchronization

/// The live board server: a `Store` per team kept in a journal, a WebSocket per client at
/// `/ws?team=NAME`, and the page at `/`.
///
/// A client proves it may use a team's board with the team's token (``AccessPolicy``), then gets a
/// snapshot of the board's view (or, when it reconnects with the board and version it has, a patch from
/// that version), then one patch frame per change it has not seen. Each connection reads the team's
/// shared view scope through `values(buffering: .newest(1))`: the store hands a new view to the
/// connection's one-slot buffer and moves on, so a client that is slow to read its socket holds at most
/// one pending view (newer views replace it; the versions skipped are counted as superseded) and never
/// slows the store or the other clients. The subscription lives for the connection: its send loop's task is cancelled when
/// the socket closes, which ends the iteration and the subscription.
public struct LiveServer: Sendable {
    /// The boards, by team name.
    public let teams: [String: TeamBoard]
    /// The teams' tokens and the allowed page origins.
    public let access: AccessPolicy
    /// Counters for the whole server, read by tests.
    public let stats: ServerStats
    /// The least time between two patches to one client (zero: send as soon as the socket takes it).
    /// A longer interval lets more changes fold into each patch: fewer frames, and more actions per
    /// second for the server, at the price of up to that much more latency. A change after a quiet
    /// spell is sent at once; the patches after it wait for the next instant of a grid shared by every
    /// connection, so clients in step share their frames.
    public let patchInterval: Duration
    /// Whether every change sends each client the whole board (a snapshot frame) instead of a patch, with
    /// no interval: the baseline the load run compares patches with.
    public let sendsWholeBoard: Bool
    /// The origin of the patch intervals' grid.
    let epoch = ContinuousClock.now
    /// How long a client that sent no token in a header has to send its hello frame.
    public let helloTimeout: Duration
    /// How long a new connection may stay silent before its first request.
    public let firstRequestTimeout: Duration
    /// The connections that have not sent their first request yet.
    public let quietConnections = QuietConnections()
    /// The open WebSockets, closed with 1001 (going away) by ``closingService``.
    let openSockets = OpenSockets()

    /// Creates a server for these boards.
    public init(
        boards: [String: TeamBoard], access: AccessPolicy,
        patchInterval: Duration = .zero, sendsWholeBoard: Bool = false, helloTimeout: Duration = .seconds(10),
        firstRequestTimeout: Duration = .seconds(10)
    ) {
        self.sendsWholeBoard = sendsWholeBoard
        self.firstRequestTimeout = firstRequestTimeout
        self.teams = boards
        self.access = access
        self.stats = ServerStats()
        self.patchInterval = patchInterval
        self.helloTimeout = helloTimeout
    }

    /// Closes every connection that has not sent a request yet (and any that opens from now on): the
    /// first step of a shutdown, since such a connection would otherwise hold it until its timeout.
    public func closeQuietConnections() {
        quietConnections.closeAll()
    }

    /// A service to run after ``application(host:port:logger:onRunning:)`` in the same service group
    /// (which stops services in reverse order, so this one first): at a graceful shutdown it closes every
    /// open WebSocket with 1001 (going away), and any opened after, before the application stops.
    public var closingService: some Service { SocketClosingService(sockets: openSockets) }

    /// The first items of the demo teams' boards.
    static let alphaSeed = ["Write the release notes", "Review the store diff", "Fix the flaky test", "Plan the demo"]
    static let betaSeed = ["Order the cake", "Book the room"]

    /// The tokens of ``seeded(patchInterval:)``'s teams: known, so only for tests and the
    /// load run's in-process server.
    public static let seededTokens = ["alpha": "alpha-token-for-tests", "beta": "beta-token-for-tests"]

    /// Two teams with seeded boards kept in memory (nothing survives the process), with the tokens
    /// ``seededTokens``: for tests and the load run.
    public static func seeded(patchInterval: Duration = .zero) -> LiveServer {
        LiveServer(
            boards: [
                "alpha": TeamBoard(Board(title: "Team Alpha", texts: alphaSeed)),
                "beta": TeamBoard(Board(title: "Team Beta", texts: betaSeed)),
            ],
            access: AccessPolicy(tokens: seededTokens), patchInterval: patchInterval)
    }

    /// The Hummingbird application serving the page and the WebSocket endpoint on `host:port` (port 0
    /// picks a free one); `onRunning` receives the port once the server listens.
    ///
    /// A connection that sends nothing within ``firstRequestTimeout`` of opening is closed, so is one idle for 30 s between
    /// requests, and so is a WebSocket whose peer stops answering pings (one every 20 s). On a graceful
    /// shutdown every WebSocket is closed with a close frame: 1001 (going away) when ``closingService``
    /// runs after the application in its service group, as `live-server` does; connections that have not
    /// sent a request are closed by ``closeQuietConnections()``.
    public func application(
        host: String = "127.0.0.1", port: Int, logger: Logger? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        let policy = access.contentSecurityPolicy
        router.head("/") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"])
        }
        router.get("/") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                          .init("Content-Security-Policy")!: policy,
                          .init("Referrer-Policy")!: "no-referrer"],
                body: .init(byteBuffer: ByteBuffer(string: Page.html)))
        }
        // Reached only by a request to /ws that was not upgraded: a refused one gets its reason.
        router.get("/ws") { request, _ in
            switch self.admit(request.head) {
            case .refused(let reason):
                return Response(status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"],
                                body: .init(byteBuffer: ByteBuffer(string: reason + "\n")))
            case .admitted:
                return Response(status: .upgradeRequired, headers: [.contentType: "text/plain; charset=utf-8"],
                                body: .init(byteBuffer: ByteBuffer(string: "a WebSocket upgrade is expected\n")))
            }
        }
        var defaultLogger = Logger(label: "live-server")
        defaultLogger.logLevel = .warning
        var serverLogger = logger ?? defaultLogger
        serverLogger.handler = RefusalLogFilter(base: serverLogger.handler)
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: .seconds(30)),
            ws: .init(maxFrameSize: Limits.frameLimit, autoPing: .enabled(timePeriod: .seconds(20)),
                      closeTimeout: .seconds(1)))
        return Application(
            router: router,
            server: HTTPServerBuilder { responder in
                let upgrading = HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration) { head, channel, _ in
                    switch self.admit(head) {
                    case .admitted(let client):
                        return .upgrade([:]) { inbound, outbound, _ in
                            try await self.serve(client, inbound: inbound, outbound: outbound)
                        }
                    case .refused(let reason):
                        try await Refusal.send(reason, on: channel)
                        return .dontUpgrade
                    }
                }
                return TimedUpgradeChannel(
                    inner: upgrading, timeout: TimeAmount(self.firstRequestTimeout), quiet: self.quietConnections)
            },
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: serverLogger)
    }

    /// A WebSocket upgrade the server will take. A page (no `Authorization` header) is let in whatever
    /// team it names, and refused at its hello when the team is unknown, as for a wrong token: a browser
    /// cannot read why an upgrade failed, but it can read an error frame.
    struct Admission: Sendable {
        var team: String
        var board: TeamBoard?
        /// Whether the token came in the `Authorization` header (else it must come in a hello frame).
        var authorized: Bool
        /// The board and version the client has, when it resumes.
        var resume: (board: String, version: Int)?
    }

    enum AdmissionResult: Sendable {
        case admitted(Admission)
        case refused(String)
    }

    /// Decides on an upgrade to `/ws`: its origin, its team, and its token when the header carries one.
    func admit(_ head: HTTPRequest) -> AdmissionResult {
        let uri = URI(head.path ?? "/")
        guard uri.path == "/ws" else { return .refused("not found") }
        guard access.allowsOrigin(head.headerFields[.origin], authority: head.authority) else {
            stats.refused.add(1, ordering: .relaxed)
            return .refused("pages from this origin may not use this server")
        }
        let query = uri.queryParameters
        let team = query.get("team") ?? ""
        var authorized = false
        if let header = head.headerFields[.authorization] {
            guard teams[team] != nil, let token = AccessPolicy.bearerToken(in: header), access.allows(team: team, token: token) else {
                stats.refused.add(1, ordering: .relaxed)
                return .refused("unknown team or wrong token")
            }
            authorized = true
        }
        var resume: (String, Int)?
        if let id = query.get("board"), let version = query.get("version").flatMap({ Int($0) }), version >= 0 {
            resume = (id, version)
        }
        return .admitted(Admission(team: team, board: teams[team], authorized: authorized, resume: resume))
    }

    /// Serves one connection until its socket closes or the server shuts down.
    func serve(_ client: Admission, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        guard let socket = openSockets.add(outbound) else {
            try await outbound.close(.goingAway, reason: "the server is shutting down")
            return
        }
        defer { openSockets.remove(socket) }
        var messages = inbound.messages(maxSize: Limits.frameLimit).makeAsyncIterator()
        if !client.authorized {
            // A client that never says hello is closed after `helloTimeout`, which ends the read below.
            let timer = Task {
                try await Task.sleep(for: helloTimeout)
                try await outbound.close(.policyViolation, reason: "no hello")
            }
            defer { timer.cancel() }
            guard case .text(let text)? = try await messages.next() else { return }
            guard let token = HelloFrame.token(in: text), client.board != nil, access.allows(team: client.team, token: token) else {
                stats.refused.add(1, ordering: .relaxed)
                try await outbound.write(.text(ServerFrame.error(
                    message: "the token was refused", ref: ClientFrame.readRef(text), code: "unauthorized").encoded()))
                try await outbound.close(.policyViolation, reason: "unauthorized")
                return
            }
        }
        // Admitted with a header only for a known team; after a hello only for a known one too.
        guard let board = client.board else { return }
        stats.connections.add(1, ordering: .relaxed)
        defer { stats.connections.subtract(1, ordering: .relaxed) }
        let resumeView = client.resume.flatMap { resume in
            resume.board == board.id ? board.recentViews.view(at: resume.version) : nil
        }
        // The send loop runs until it is cancelled: when the socket closes, or at a shutdown.
        let pusher = Task {
            try await self.push(board, resumingFrom: resumeView) { text in try await outbound.write(.text(text)) }
        }
        try await withGracefulShutdownHandler {
            defer { pusher.cancel() }
            try await receive(&messages, for: board, replyingTo: outbound)
        } onGracefulShutdown: {
            pusher.cancel()
            Task { try? await outbound.close(.goingAway, reason: "the server is shutting down") }
        }
        do {
            try await pusher.value
        } catch is CancellationError {
            // Ended by the cancel above.
        }
    }

    /// Sends the snapshot of `board`'s view (or, given the view the client has, a patch from it), then
    /// one patch frame per view the client has not seen, through `send` (awaited: a slow `send` is a slow
    /// client), until the calling task is cancelled.
    ///
    /// While `send` is busy, the store keeps going: new views wait in a one-slot buffer, a newer one
    /// replacing an older one (the versions a client skips are counted in ``ServerStats/superseded``), and
    /// the next patch goes from the last view sent straight to the newest. A view of the version last sent sends nothing. Clients that
    /// go from the same version to the same version share one encoded frame (``TeamBoard/frames``).
    public func push(
        _ board: TeamBoard, resumingFrom resumed: BoardView? = nil, send: (String) async throws -> Void
    ) async throws {
        // The view straight into the bridge: each new version costs every connection one hand-over into
        // its one-slot buffer, nothing more. The iteration ends when the task is cancelled.
        var last: BoardView?
        for try await next in board.view.asObservable().values(buffering: .newest(1)) {
            guard let previous = last else {
                last = next
                if let resumed {
                    // A resumed client is told it is live even when nothing changed meanwhile.
                    let text = board.frames.patch(from: resumed, to: next)
                        ?? ServerFrame.patch(from: resumed.version, version: next.version, title: nil, items: nil).encoded()
                    try await send(text)
                    stats.resumes.add(1, ordering: .relaxed)
                } else {
                    try await send(board.frames.snapshot(of: next))
                    stats.snapshots.add(1, ordering: .relaxed)
                }
                continue
            }
            last = next
            stats.superseded.add(max(0, next.version - previous.version - 1), ordering: .relaxed)
            if sendsWholeBoard {
                let text = board.frames.snapshot(of: next)
                try await send(text)
                stats.patches.add(1, ordering: .relaxed)
                stats.patchBytes.add(text.utf8.count, ordering: .relaxed)
                stats.wholeStateBytes.add(text.utf8.count, ordering: .relaxed)
                continue
            }
            guard let text = board.frames.patch(from: previous, to: next) else { continue }
            try await send(text)
            stats.patches.add(1, ordering: .relaxed)
            stats.patchBytes.add(text.utf8.count, ordering: .relaxed)
            stats.wholeStateBytes.add(board.frames.snapshot(of: next).utf8.count, ordering: .relaxed)
            if patchInterval > .zero { try await Task.sleep(until: nextTick(), clock: .continuous) }
        }
    }

    /// The next instant on the server's grid of patch intervals (at least a quarter interval away). Every
    /// connection waits for the same instants, so the clients of a board that are in step wake together,
    /// go from the same version to the same version, and share one encoded frame.
    func nextTick() -> ContinuousClock.Instant {
        let now = ContinuousClock.now
        let elapsed = epoch.duration(to: now)
        let ticks = Int64((elapsed / patchInterval).rounded(.down)) + 1
        var next = epoch + patchInterval * ticks
        if now.duration(to: next) < patchInterval / 4 { next += patchInterval }
        return next
    }

    /// Reads the client's frames: decodes, checks and performs each command, answering refusals (and
    /// frames with a `ref`) on the same socket.
    func receive(
        _ messages: inout WebSocketInboundMessageStream.AsyncIterator, for board: TeamBoard,
        replyingTo outbound: WebSocketOutboundWriter
    ) async throws {
        // Commands are handed to the board without waiting for their outcome, so one client's commands
        // can share a journal sync; the board applies them in the order they arrive and answers in that
        // order, and the answers go out through `replies`.
        let (replies, replying) = AsyncStream.makeStream(of: ServerFrame.self)
        // Every reply holds one of the window's places from before it is asked for until it is written,
        // so a client that sends and never reads holds at most `commandsInFlight` replies here; then this
        // loop stops reading its socket.
        let window = CommandWindow(limit: Limits.commandsInFlight)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await reply in replies {
                    // A write fails only once the socket is closed; the reading loop then ends on its own,
                    // and the places go back so it never waits for them.
                    try? await outbound.write(.text(reply.encoded()))
                    window.release()
                }
            }
            defer { replying.finish() }
            func refuse(_ reply: ServerFrame) async {
                stats.rejected.add(1, ordering: .relaxed)
                await window.acquire()
                replying.yield(reply)
            }
            while let message = try await messages.next() {
                guard case .text(let text) = message else {
                    await refuse(.error(message: "binary frames are not accepted", ref: nil))
                    continue
                }
                let frame: ClientFrame
                do throws(CommandRejection) {
                    frame = try ClientFrame.decode(text)
                } catch {
                    await refuse(.error(message: error.message, ref: error.ref))
                    continue
                }
                await window.acquire()
                let stats = self.stats
                board.submit(frame.command, id: frame.cid) { outcome in
                    if let reply = Self.reply(to: frame, outcome: outcome, counting: stats) {
                        replying.yield(reply)
                    } else {
                        window.release()
                    }
                }
            }
        }
    }

    /// The frame answering `frame` for `outcome` (none for an applied command without a `ref`), counted.
    static func reply(to frame: ClientFrame, outcome: CommandOutcome, counting stats: ServerStats) -> ServerFrame? {
        switch outcome {
        case .applied(let version):
            stats.accepted.add(1, ordering: .relaxed)
            return frame.ref.map { .ack(ref: $0, version: version) }
        case .duplicate(let version):
            stats.duplicates.add(1, ordering: .relaxed)
            return frame.ref.map { .ack(ref: $0, version: version, duplicate: true) }
        case .rejected(let rejection):
            stats.rejected.add(1, ordering: .relaxed)
            return .error(message: rejection.message, ref: frame.ref)
        case .unavailable(let reason):
            stats.unavailable.add(1, ordering: .relaxed)
            return .error(message: reason, ref: frame.ref, retry: true)
        }
    }
}

/// The open WebSockets of a server, so that a shutdown closes each with 1001 (going away) itself: the
/// WebSocket library's own shutdown closes them with 1000.
final class OpenSockets: Sendable {
    private struct State {
        var sockets: [Int: WebSocketOutboundWriter] = [:]
        var next = 0
        var closing = false
    }

    private let state = Mutex(State())

    /// Keeps `socket` until ``remove(_:)``; `nil` once the sockets are being closed (close it yourself).
    func add(_ socket: WebSocketOutboundWriter) -> Int? {
        state.withLock { state in
            guard !state.closing else { return nil }
            state.next += 1
            state.sockets[state.next] = socket
            return state.next
        }
    }

    func remove(_ id: Int) { state.withLock { _ = $0.sockets.removeValue(forKey: id) } }

    /// Sends every open socket its close frame (1001) and refuses sockets from now on.
    func closeAll() async {
        let sockets = state.withLock { state in
            state.closing = true
            return Array(state.sockets.values)
        }
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets {
                group.addTask { try? await socket.close(.goingAway, reason: "the server is shutting down") }
            }
        }
    }
}

/// Waits for the graceful shutdown, then closes the open WebSockets (see ``LiveServer/closingService``).
struct SocketClosingService: Service {
    let sockets: OpenSockets

    func run() async throws {
        try? await gracefulShutdown()
        await sockets.closeAll()
    }
}

/// How many of one connection's commands may wait for their outcome at once: ``acquire()`` waits while
/// `limit` are out, ``release()`` lets the next one in.
final class CommandWindow: Sendable {
    private struct State {
        var out = 0
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = limit }

    /// Takes a place, waiting for one when all `limit` are out. One task acquires at a time (the
    /// connection's reading loop).
    func acquire() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.out < limit {
                    state.out += 1
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Gives a place back, to the waiting task if there is one.
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter  // the place passes straight to the waiter
            }
            state.out -= 1
            return nil
        }
        waiter?.resume()
    }
}

/// The page served at `/`, read once from the package's resources.
enum Page {
    static let html: String = {
        guard let url = Bundle.module.url(forResource: "index", withExtension: "html", subdirectory: "Public"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "<!doctype html><p>index.html is missing from the LiveServerCore resources</p>" }
        return text
    }()
}

/// Why the server could not listen, in one line.
public enum ListenFailure {
    /// A line naming the address and the reason (`address already in use`, say) for an error the server
    /// threw while starting or running.
    public static func describe(_ error: any Error, host: String, port: Int) -> String {
        if let error = error as? IOError {
            return "cannot listen on \(host):\(port): \(String(cString: strerror(error.errnoCode)))"
        }
        return "cannot listen on \(host):\(port): \(error)"
    }
}

/// The answer to a refused WebSocket upgrade: `403 Forbidden` with the reason, then the connection closes.
///
/// Hummingbird answers every upgrade its `shouldUpgrade` declines with an empty `400 Bad Request`, which
/// hides why. So the refusal is written here, on the connection's HTTP/1 encoder, before declining; the
/// connection is closed after it, and the library's own answer then finds it closed and sends nothing
/// (the error it logs for that is dropped by ``RefusalLogFilter``).
enum Refusal {
    static func send(_ reason: String, on channel: any Channel) async throws {
        let body = ByteBuffer(string: reason + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: .forbidden, headers: headers)
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
        channel.write(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil)
        try await channel.writeAndFlush(HTTPServerResponsePart.end(nil))
        try? await channel.close()
    }
}

/// A log handler that drops the one error Hummingbird logs after a ``Refusal`` (its own answer to the
/// declined upgrade finds the connection closed) and passes everything else to `base`.
struct RefusalLogFilter: LogHandler {
    var base: any LogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        if event.message.description == "Error handling upgrade result",
           case .string(let type)? = event.metadata?["error.type"],
           type == "\(ChannelError.inappropriateOperationForState)" {
            return
        }
        base.log(event: event)
    }
}

/// Ends the process a fixed time after the first SIGTERM or SIGINT, whatever is still running then.
///
/// A backstop for a graceful shutdown that hangs: `lastly` runs, then the process exits with status 0,
/// writing one line to standard error. Lives as long as the value is kept.
public final class ShutdownWatchdog: Sendable {
    /// The signal sources, kept for the watchdog's life (only ever read here, behind a lock for `Sendable`).
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// Starts watching for SIGTERM and SIGINT: at the first one `onSignal` runs, and `limit` later, the
    /// process exits.
    public init(limit: Duration, onSignal: @escaping @Sendable () -> Void = {}, lastly: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "live-server.watchdog")
        let milliseconds = Int(limit.components.seconds * 1_000 + limit.components.attoseconds / 1_000_000_000_000_000)
        sources = Mutex([SIGTERM, SIGINT].map { signalNumber in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            // Ignored as a process-wide default, so a signal that arrives before the service group takes
            // over the signals still only reaches this source (it would otherwise end the process at once).
            signal(signalNumber, SIG_IGN)
            source.setEventHandler {
                onSignal()
                queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                    FileHandle.standardError.write(Data("live-server: connections still open \(milliseconds) ms after the signal; closing them\n".utf8))
                    lastly()
                    exit(0)
                }
            }
            source.resume()
            return source
        })
    }
}
