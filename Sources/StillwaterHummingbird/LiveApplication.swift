#if Hummingbird
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension LiveEndpoint {
    /// The Hummingbird application that serves this endpoint at `host:port` (0 picks a free port): the
    /// WebSocket upgrade on ``server``, the routes of ``addRoutes(to:)``, and `page` at `/` when given
    /// (``addPage(_:at:to:)``). `onRunning` receives the port once it listens. Run it in one
    /// `ServiceGroup` before the endpoint (as ``run(page:host:port:logger:onRunning:)`` does), so a
    /// shutdown drains the clients first.
    ///
    /// - Parameter logger: The application's logger; by default one that logs warnings and errors only.
    public func application(
        page: String? = nil, host: String = "127.0.0.1", port: Int, logger: Logger? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        application(routes: { _ in }, page: page, host: host, port: port, logger: logger, onRunning: onRunning)
    }

    /// The application of ``application(page:host:port:logger:onRunning:)`` with the app's own routes
    /// beside the endpoint's: `routes` adds them to the router (`/metrics`, `/healthz`, say) before the
    /// page, so the page's path is the only one they cannot take. (`routes` comes first, so that a
    /// trailing closure is always `onRunning`.)
    public func application(
        routes: (Router<BasicRequestContext>) -> Void, page: String? = nil, host: String = "127.0.0.1", port: Int,
        logger: Logger? = nil, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        addRoutes(to: router)
        routes(router)
        if let page { addPage(page, to: router) }
        var quiet = Logger(label: "stillwater-live")
        quiet.logLevel = .warning
        return Application(
            router: router, server: server, configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger ?? quiet)
    }

    /// Serves this endpoint (and `page` at `/`) at `host:port` until SIGTERM or SIGINT, then shuts down
    /// gracefully: the endpoint drains its clients (their waiting frames, then close 1001) while the
    /// application still runs, and the whole shutdown is given at most the endpoint's
    /// ``Configuration/drainTimeout`` plus 1 s.
    ///
    /// Call it once per endpoint: when it returns or throws, the endpoint has closed its hubs. While it
    /// runs it takes SIGTERM and SIGINT for itself; afterwards both have their default action again.
    ///
    /// ```swift
    /// let live = LiveEndpoint(path: "/live", hub: hub)
    /// try await live.run(page: html, port: 8080) { port in print("listening on \(port)") }
    /// ```
    ///
    /// - Throws: ``LiveListenError`` when the server fails before it listens (an address in use, a host
    ///   that cannot be resolved), else what a service of the group throws.
    public func run(
        page: String? = nil, host: String = "127.0.0.1", port: Int, logger: Logger? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        try await run(routes: { _ in }, page: page, host: host, port: port, logger: logger, onRunning: onRunning)
    }

    /// Serves as ``run(page:host:port:logger:onRunning:)`` does, with the app's own routes beside the
    /// endpoint's (``application(routes:page:host:port:logger:onRunning:)``).
    ///
    /// - Throws: ``LiveListenError`` when the server fails before it listens, else what a service of
    ///   the group throws.
    public func run(
        routes: (Router<BasicRequestContext>) -> Void, page: String? = nil, host: String = "127.0.0.1", port: Int,
        logger: Logger? = nil, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let listening = Atomic<Bool>(false)
        let app = application(routes: routes, page: page, host: host, port: port, logger: logger) { port in
            listening.store(true, ordering: .relaxed)
            await onRunning(port)
        }
        var groupLogger = Logger(label: "stillwater-live")
        groupLogger.logLevel = .warning
        // The endpoint after the application: the group stops it first.
        var configuration = ServiceGroupConfiguration(
            services: [app, self], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger ?? groupLogger)
        configuration.maximumGracefulShutdownDuration = self.configuration.drainTimeout + .seconds(1)
        // The group ignores the signals it handles and leaves them so; the process's defaults come back.
        defer {
            signal(SIGTERM, SIG_DFL)
            signal(SIGINT, SIG_DFL)
        }
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch where !listening.load(ordering: .relaxed) && !(error is CancellationError) {
            let reason = (error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(error)"
            throw LiveListenError(host: host, port: port, reason: reason)
        }
    }
}

/// An address a ``LiveEndpoint`` could not listen on.
public struct LiveListenError: Error, Equatable, CustomStringConvertible {
    /// The host asked for.
    public var host: String
    /// The port asked for.
    public var port: Int
    /// The system's reason (`Address already in use`, say).
    public var reason: String

    /// `cannot listen on HOST:PORT: REASON`.
    public var description: String { "cannot listen on \(host):\(port): \(reason)" }
}
#endif
