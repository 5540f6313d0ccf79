#if Hummingbird
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle
import StillwaterLive
import Synchronization

/// Serves one or more ``LiveHub``s over WebSockets on a Hummingbird 2 server: the upgrade at one path,
/// the `Origin` check, timeouts and pings, a write loop per client, the hubs' patch ticks, and a prompt
/// drain at shutdown. It also serves the JavaScript client, `stillwater-live.js`.
///
/// ```swift
/// let hub = try await LiveHub.open(CounterService(), log: journal, initial: Counter())
/// let live = LiveEndpoint(path: "/live", hub: hub)
/// let router = Router()
/// live.addRoutes(to: router)
/// let app = Application(router: router, server: live.server,
///                       configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
/// // The endpoint after the application: a shutdown stops it first, so clients get 1001.
/// try await ServiceGroup(services: [app, live], gracefulShutdownSignals: [.sigterm, .sigint],
///                        logger: app.logger).run()
/// ```
///
/// **Several hubs.** Give the hubs with a key each and say which key a connection wants, from its
/// upgrade request (``LiveRoute/query``) or its hello frame (``LiveRoute/params``); ``add(_:as:)``
/// registers more while the server runs:
///
/// ```swift
/// let live = LiveEndpoint(path: "/ws", hubs: ["alpha": alphaHub, "beta": betaHub]) { route in
///     route.params["team"]
/// }
/// ```
///
/// **Rooms on demand.** With ``init(path:rooms:configuration:room:)`` a key names a room of a
/// `LiveRooms`, whose hub is opened from its log on the first join and closed once nobody was in it for
/// the rooms' idle time; a server with many rooms keeps open only those in use.
///
/// A connection without a hub (no key, or one with no hub) is refused as for a wrong token: an error frame
/// (`unauthorized`) and close 4401, so a client cannot tell a missing hub from a wrong token.
///
/// **What a connection goes through.** A new TCP connection has ``Configuration/firstRequestTimeout`` to
/// send its whole first request head, then ``Configuration/idleTimeout`` between requests. A WebSocket
/// upgrade is answered `403 Forbidden` with a one-line reason when its `Origin` is refused (see
/// ``Configuration/extraOrigins``) and `404 Not Found` for another path. Once upgraded, the client has
/// ``Configuration/helloTimeout`` to send its first frame, which picks the hub; from then on the hub's
/// ``LiveConnection`` decides everything (credentials through your service's `authenticate`, which
/// receives `origin`, `authorization`, `address` and `path` as the handshake's `transport`; `address` is
/// the socket's peer, or the forwarded client's behind one of ``Configuration/trustedProxies``). The server
/// pings every ``Configuration/pingInterval`` and closes a socket whose peer stops answering.
///
/// **Shutdown.** Run the endpoint as a `Service` after the `Application` in one `ServiceGroup` (a group
/// stops its services in reverse order). At a graceful shutdown it stops taking connections, closes those
/// that have not sent a request, closes every hub (commands in progress are answered, a snapshot is
/// written), sends every client its waiting frames and then close 1001 (going away), and returns once
/// every close is sent or ``Configuration/drainTimeout`` passed; then the application stops. Put the
/// endpoint in the application's own `services` instead and the WebSocket library closes the sockets
/// first, with 1000.
///
/// Cost: one task per connection for its reads plus one for its writes, one tick task per hub. A patch or
/// snapshot is encoded once per version and audience, copied into a NIO buffer once, and that buffer is
/// written to every client of the audience (each socket adds only its frame header); the frames waiting
/// for a client go out together, with one flush.
public final class LiveEndpoint<Live: LiveService>: Sendable {
    /// The timeouts, bounds and allowed origins of a ``LiveEndpoint``.
    public struct Configuration: Sendable {
        /// Origins allowed besides the server's own (`scheme://host[:port]`, compared in lowercase), for
        /// pages served through a proxy under another name. Empty by default.
        public var extraOrigins: Set<String>
        /// How long a new connection has to send its whole first request head (10 s by default); a
        /// silent one is closed then.
        public var firstRequestTimeout: Duration
        /// How long a connection may stay idle between HTTP requests (30 s by default).
        public var idleTimeout: Duration
        /// How long an upgraded client has to send its first frame, the hello (10 s by default). The
        /// hub's own ``LiveOptions/helloTimeout`` bounds the rest of the admission.
        public var helloTimeout: Duration
        /// How often the server pings each WebSocket (20 s by default); a peer that misses a pong is closed.
        public var pingInterval: Duration
        /// How long the server waits for a client's answer to its close before it drops the connection
        /// (1 s by default).
        public var closeTimeout: Duration
        /// The longest shutdown drain: the wait for every client's close to be sent (5 s by default).
        public var drainTimeout: Duration
        /// The largest WebSocket message taken, in bytes (1 MiB by default); a longer one closes the
        /// connection (1009). Keep it above the hubs' ``LiveLimits/maxFrameBytes`` so that a frame
        /// between the two gets the protocol's `too_large` error and the connection stays open.
        public var maxMessageBytes: Int
        /// Where the JavaScript client is served (`/stillwater-live.js` by default); `nil` serves it nowhere.
        public var scriptPath: String?
        /// The reverse proxies whose `X-Forwarded-For` is believed: addresses (`127.0.0.1`, `::1`) or
        /// ranges in CIDR notation (`10.0.0.0/8`). Empty by default: the client's address is the socket's
        /// peer, whatever the request says.
        ///
        /// The handshake's `transport["address"]` (what your service's `authenticate` and your logs see) is
        /// the socket's peer, unless that peer is one of these: then it is the address the proxy appended
        /// to `X-Forwarded-For`, and, while that one is a trusted proxy too, the one before it. An entry
        /// that is not an IP address stops the walk at the last trusted hop. Name only proxies you run:
        /// a client that is trusted here can claim any address.
        ///
        /// ```swift
        /// let configuration = LiveEndpoint<CounterService>.Configuration(trustedProxies: ["127.0.0.1", "10.0.0.0/8"])
        /// print(configuration.trustedProxies.sorted())
        /// // Prints "["10.0.0.0/8", "127.0.0.1"]"
        /// ```
        ///
        /// - Note: Only `X-Forwarded-For` is read (not RFC 7239's `Forwarded`); the proxy must set or append
        ///   it, as nginx's `proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for` does.
        public var trustedProxies: Set<String>

        /// Creates a configuration; every member has the default said on it.
        public init(
            extraOrigins: Set<String> = [], firstRequestTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(30),
            helloTimeout: Duration = .seconds(10), pingInterval: Duration = .seconds(20), closeTimeout: Duration = .seconds(1),
            drainTimeout: Duration = .seconds(5), maxMessageBytes: Int = 1 << 20, scriptPath: String? = "/stillwater-live.js",
            trustedProxies: Set<String> = []
        ) {
            precondition(maxMessageBytes > 0, "LiveEndpoint.Configuration(maxMessageBytes:) must be positive (got \(maxMessageBytes))")
            for entry in trustedProxies {
                precondition(Self.isTrustedProxy(entry),
                             "LiveEndpoint.Configuration(trustedProxies:): \"\(entry)\" is neither an IP address nor a CIDR range (10.0.0.0/8)")
            }
            self.extraOrigins = Set(extraOrigins.map { $0.lowercased() })
            self.firstRequestTimeout = firstRequestTimeout
            self.idleTimeout = idleTimeout
            self.helloTimeout = helloTimeout
            self.pingInterval = pingInterval
            self.closeTimeout = closeTimeout
            self.drainTimeout = drainTimeout
            self.maxMessageBytes = maxMessageBytes
            self.scriptPath = scriptPath
            self.trustedProxies = trustedProxies
        }

        /// Whether `entry` may be one of ``trustedProxies``: an IPv4 or IPv6 address, or one with a prefix
        /// length (`10.0.0.0/8`, `fd00::/8`). Check a value read from a command line or a file with it
        /// before making a configuration, which stops on one that is not.
        public static func isTrustedProxy(_ entry: String) -> Bool {
            AddressRange(entry) != nil
        }
    }

    private enum Phase {
        /// ``run()`` has not started: hubs are only kept.
        case waiting
        /// ``run()`` ticks the hubs; a hub added now is handed to it.
        case running(AsyncStream<LiveHub<Live>>.Continuation)
        /// The drain has begun or ended: a hub added now is closed at once.
        case closing
    }

    private struct State {
        var hubs: [String: LiveHub<Live>]
        var phase = Phase.waiting
    }

    /// The path of the WebSocket upgrade, as given (`/live`, say).
    public let path: String
    /// The endpoint's timeouts, bounds and origins.
    public let configuration: Configuration
    private let key: @Sendable (LiveRoute) -> String?
    /// The rooms opened on demand, for keys that name no registered hub.
    private let rooms: LiveRooms<Live>?
    private let trustedProxies: [AddressRange]
    private let state: Mutex<State>
    let quiet = QuietConnections()
    let sockets = OpenSockets()

    /// An endpoint for several hubs, each under a key; `key` names the one a connection wants (nil: none).
    ///
    /// - Parameters:
    ///   - path: The path of the WebSocket upgrade; it starts with `/`.
    ///   - hubs: The hubs by key; more can be added with ``add(_:as:)``.
    ///   - configuration: Timeouts, bounds and allowed origins.
    ///   - key: Called once per connection, with its upgrade request and hello, outside every lock.
    public convenience init(
        path: String = "/live", hubs: [String: LiveHub<Live>] = [:], configuration: Configuration = Configuration(),
        key: @escaping @Sendable (LiveRoute) -> String?
    ) {
        self.init(path: path, hubs: hubs, rooms: nil, configuration: configuration, key: key)
    }

    /// An endpoint for rooms opened on demand: `room` names the room a connection wants (nil: none), and
    /// ``LiveRooms`` opens its hub on the first join and closes it once idle. The endpoint ticks nothing
    /// itself (the rooms tick their hubs) and closes the rooms at shutdown.
    ///
    /// ```swift
    /// let rooms = LiveRooms<BoardService>(idleTimeout: .seconds(60)) { team in
    ///     try await LiveHub.open(BoardService(team: team), log: try journal(for: team), initial: Board())
    /// }
    /// let live = LiveEndpoint(path: "/live", rooms: rooms) { route in route.params["team"] }
    /// ```
    ///
    /// A connection whose room cannot be opened (`LiveRooms`' opener threw) is refused as for a wrong
    /// token: an error frame (`unauthorized`) and close 4401.
    ///
    /// - Parameters:
    ///   - path: The path of the WebSocket upgrade; it starts with `/`.
    ///   - rooms: The rooms.
    ///   - configuration: Timeouts, bounds and allowed origins.
    ///   - room: Called once per connection, with its upgrade request and hello, outside every lock.
    public convenience init(
        path: String = "/live", rooms: LiveRooms<Live>, configuration: Configuration = Configuration(),
        room: @escaping @Sendable (LiveRoute) -> String?
    ) {
        self.init(path: path, hubs: [:], rooms: rooms, configuration: configuration, key: room)
    }

    private init(
        path: String, hubs: [String: LiveHub<Live>], rooms: LiveRooms<Live>?, configuration: Configuration,
        key: @escaping @Sendable (LiveRoute) -> String?
    ) {
        self.rooms = rooms
        precondition(path.hasPrefix("/"), "LiveEndpoint(path:) must start with / (got \"\(path)\")")
        precondition(configuration.scriptPath.map { $0.hasPrefix("/") && $0 != path } ?? true,
                     "LiveEndpoint.Configuration(scriptPath:) must start with / and differ from the WebSocket path")
        self.path = path
        self.configuration = configuration
        self.key = key
        trustedProxies = configuration.trustedProxies.map { entry in
            guard let range = AddressRange(entry) else {
                preconditionFailure("LiveEndpoint.Configuration.trustedProxies: \"\(entry)\" is neither an IP address nor a CIDR range (10.0.0.0/8)")
            }
            return range
        }
        state = Mutex(State(hubs: hubs))
    }

    /// An endpoint for one hub: every connection goes to it.
    public convenience init(path: String = "/live", hub: LiveHub<Live>, configuration: Configuration = Configuration()) {
        self.init(path: path, hubs: ["": hub], configuration: configuration) { _ in "" }
    }

    /// Registers `hub` under `key` for connections from now on. While the endpoint runs, its ticks start
    /// at once; once the shutdown began, the hub is closed instead.
    ///
    /// - Precondition: No hub is registered under `key` yet.
    public func add(_ hub: LiveHub<Live>, as key: String) {
        let closeNow = state.withLock { state -> Bool in
            precondition(state.hubs[key] == nil, "LiveEndpoint.add(_:as:): a hub is already registered as \"\(key)\"")
            state.hubs[key] = hub
            switch state.phase {
            case .waiting: return false
            case .running(let added):
                added.yield(hub)
                return false
            case .closing: return true
            }
        }
        if closeNow { Task { await hub.close() } }
    }

    /// The hub registered under `key`, if any.
    public func hub(_ key: String) -> LiveHub<Live>? {
        state.withLock { $0.hubs[key] }
    }

    /// Adds the endpoint's plain HTTP routes to `router`: the JavaScript client at
    /// ``Configuration/scriptPath``, and an answer for a request to the WebSocket path that was not an
    /// upgrade (`403` with the reason for a refused origin, else `426 Upgrade Required`).
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get(RouterPath(path)) { request, _ -> Response in
            if let reason = self.refusal(of: request.head) {
                return Self.plain(.forbidden, reason)
            }
            return Self.plain(.upgradeRequired, "a WebSocket upgrade is expected")
        }
        if let scriptPath = configuration.scriptPath {
            router.get(RouterPath(scriptPath)) { request, _ -> Response in
                LiveScript.response(ifNoneMatch: request.headers[.ifNoneMatch])
            }
        }
    }

    /// The server to give `Application(router:server:)`: HTTP/1.1 with the WebSocket upgrade at
    /// ``path``, the first-request timeout in front, and the endpoint's idle timeout, pings and message
    /// bound. Other requests go to the router.
    public var server: HTTPServerBuilder {
        let configuration = configuration
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: TimeAmount(configuration.idleTimeout)),
            ws: .init(maxFrameSize: configuration.maxMessageBytes, autoPing: .enabled(timePeriod: configuration.pingInterval),
                      closeTimeout: configuration.closeTimeout))
        return HTTPServerBuilder { responder in
            let upgrading = HTTP1WebSocketUpgradeChannel(responder: responder, configuration: channelConfiguration) { head, channel, _ in
                switch self.admit(head, channel: channel) {
                case .admitted(let admission):
                    return .upgrade([:]) { inbound, outbound, _ in
                        await self.serve(admission, inbound: inbound, outbound: outbound)
                    }
                case .refused(let status, let reason):
                    try await Refusal.send(status, reason, on: channel)
                    return .dontUpgrade
                }
            }
            return TimedUpgradeChannel(inner: upgrading, timeout: TimeAmount(configuration.firstRequestTimeout), quiet: self.quiet)
        }
    }

    // MARK: Admission

    /// An upgrade the endpoint takes: what its first frame's routing and the hub's check will need.
    struct Admission: Sendable {
        var request: HTTPRequest
        var query: [String: String]
        var transport: [String: String]
        var channel: any Channel
    }

    enum AdmissionResult: Sendable {
        case admitted(Admission)
        case refused(HTTPResponse.Status, String)
    }

    /// Decides on an upgrade: its path and its origin.
    func admit(_ head: HTTPRequest, channel: any Channel) -> AdmissionResult {
        let uri = URI(head.path ?? "/")
        guard uri.path == path else { return .refused(.notFound, "not found") }
        if let reason = refusal(of: head) { return .refused(.forbidden, reason) }
        var query: [String: String] = [:]
        for (name, value) in uri.queryParameters where query[String(name)] == nil {
            query[String(name)] = String(value)
        }
        var transport = ["path": head.path ?? "/"]
        transport["origin"] = head.headerFields[.origin]
        transport["authorization"] = head.headerFields[.authorization]
        transport["address"] = ClientAddress.resolve(
            peer: channel.remoteAddress?.ipAddress, forwardedFor: head.headerFields[values: ClientAddress.forwardedFor], trusted: trustedProxies)
        return .admitted(Admission(request: head, query: query, transport: transport, channel: channel))
    }

    /// Why a request to the WebSocket path is refused, or nil when it is not.
    func refusal(of head: HTTPRequest) -> String? {
        LiveOrigins.allows(head.headerFields[.origin], authority: head.authority, extra: configuration.extraOrigins)
            ? nil : "pages from this origin may not use this server"
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }

    // MARK: Serving a socket

    private typealias Session = LiveSession<Live.Command, Live.Identity>

    /// Serves one upgraded socket until it closes: its first frame picks the hub, then the hub's
    /// connection is fed every frame read, and a ``SocketWriter`` writes what it has to write on the socket's
    /// event loop.
    func serve(_ admission: Admission, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let socket = EndpointSocket(outbound: outbound, channel: admission.channel, closeTimeout: configuration.closeTimeout)
        guard let id = sockets.open(socket) else {
            await socket.close(.goingAway, reason: LiveEndpoint.closingReason)
            return
        }
        defer { sockets.remove(id) }
        var messages = inbound.messages(maxSize: configuration.maxMessageBytes).makeAsyncIterator()
        // A client that sends nothing is answered as the protocol says (hello_timeout, 4408). The timer is
        // the event loop's: cancelled, it is gone (no task or wake-up left behind for the timeout's length).
        let timedOut = HelloTimeoutClose()
        let timer = admission.channel.eventLoop.scheduleTask(in: TimeAmount(configuration.helloTimeout)) { [sockets] in
            timedOut.fire(claim: { sockets.claim(id) }) {
                var session = Session()
                session.helloTimedOut()
                await socket.send(session)
            }
        }
        let first = try? await messages.next()
        timer.cancel()
        // The timer starts nothing from here on; one that fired first is let finish its close before the
        // handler ends (the library would send 1000).
        await timedOut.cancel()
        // Closed meanwhile by the timer or the drain: the close is sent; the library ends the handshake.
        guard let first, sockets.claim(id, connected: true) else { return }
        guard let routed = await route(first, admission: admission, socket: socket) else { return }
        let connection = routed.connection
        SocketWriter.start(connection, to: socket) { [sockets] in sockets.closeSent(id) }
        connection.receive(routed.hello)
        while let message = try? await messages.next() {
            switch message {
            case .text(let text): connection.receive(text)
            case .binary: connection.receiveBinary()
            }
        }
        connection.transportClosed()
    }

    /// A connection to the hub (or room) a socket's first frame names, and that frame's text; nil after
    /// answering a first frame that is no hello, or names no hub (or a room that cannot open), as a hub
    /// would (the error frame and the close).
    private func route(
        _ first: WebSocketMessage, admission: Admission, socket: EndpointSocket
    ) async -> (connection: LiveConnection<Live>, hello: String)? {
        var session = Session()
        guard case .text(let text) = first else {
            session.receiveBinary()
            await socket.send(session)
            return nil
        }
        do {
            let frame = try LiveClientFrame<Live.Command>.decode(text, maxBytes: configuration.maxMessageBytes)
            if case .hello(let hello) = frame {
                let route = LiveRoute(request: admission.request, query: admission.query, params: hello.params)
                if let key = key(route) {
                    if let hub = hub(key) { return (hub.connect(transport: admission.transport), text) }
                    if let rooms, let connection = try? await rooms.connect(to: key, transport: admission.transport) {
                        return (connection, text)
                    }
                }
            }
            // Not a hello (a protocol error), or a hello for no hub (refused as for a wrong token).
            _ = session.receive(frame)
            session.refused(LiveEndpoint.refusedMessage)
        } catch {
            session.receive(invalid: error)
        }
        await socket.send(session)
        return nil
    }

    static var closingReason: String { "the server is shutting down" }
    static var refusedMessage: String { "the credentials were refused" }
}

/// What a ``LiveEndpoint`` knows of a connection when it picks its hub.
public struct LiveRoute: Sendable {
    /// The WebSocket upgrade request: its path (with the query), its headers.
    public var request: HTTPRequest
    /// The query parameters of the upgrade's URL (the first value of each name).
    public var query: [String: String]
    /// The hello frame's `params`.
    public var params: [String: String]

    /// Creates a route.
    public init(request: HTTPRequest, query: [String: String] = [:], params: [String: String] = [:]) {
        self.request = request
        self.query = query
        self.params = params
    }
}

extension LiveEndpoint: Service {
    /// Ticks every hub (``LiveHub/run()``) until a graceful shutdown or cancellation, then drains:
    /// closes the connections that sent no request, closes every hub (their clients get their waiting
    /// frames and close 1001), and returns once every close is sent or ``Configuration/drainTimeout``
    /// passed.
    ///
    /// - Precondition: Called once.
    public func run() async {
        let (added, continuation) = AsyncStream.makeStream(of: LiveHub<Live>.self)
        let initial = state.withLock { state -> [LiveHub<Live>] in
            guard case .waiting = state.phase else { preconditionFailure("LiveEndpoint.run() was called twice") }
            state.phase = .running(continuation)
            return Array(state.hubs.values)
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withDiscardingTaskGroup { ticks in
                    for hub in initial { ticks.addTask { await hub.run() } }
                    for await hub in added { ticks.addTask { await hub.run() } }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        let hubs = state.withLock { state -> [LiveHub<Live>] in
            state.phase = .closing
            continuation.finish()
            return Array(state.hubs.values)
        }
        quiet.closeAll()
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets.closeUnrouted() {
                group.addTask { await socket.close(.goingAway, reason: LiveEndpoint.closingReason) }
            }
            for hub in hubs { group.addTask { await hub.close() } }
            if let rooms { group.addTask { await rooms.close() } }
        }
        await sockets.waitUntilClosesSent(within: configuration.drainTimeout)
    }
}
#endif
