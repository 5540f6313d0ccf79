import Foundation
import Hummingbird
import Logging
import NIOCore
import StillwaterHummingbird
import StillwaterLive

/// The board's web server: the page at `/`, and every team's board hub behind one WebSocket endpoint at
/// `/live`, which a client joins with its team's name (the upgrade's `?team=NAME`, else its hello's
/// `params.team`) and token.
///
/// Everything the protocol promises is the library's (`LiveEndpoint`, `LiveHub`): an unknown team or a
/// wrong token is answered `unauthorized` and close 4401 after the hello; a page from a foreign origin is
/// refused with 403 at the upgrade; at a shutdown every client gets its waiting frames and close 1001.
public struct BoardServer: Sendable {
    /// The WebSocket endpoint, with a hub per team (keyed by team name).
    public let endpoint: LiveEndpoint<BoardService>

    /// A server for `hubs`, by team; `origins` are the page origins allowed besides the server's own
    /// (`scheme://host[:port]`, for a proxy or a cluster's other nodes). A new connection has
    /// `firstRequestTimeout` to send its request, an upgraded one `helloTimeout` to send its hello.
    public init(
        hubs: [String: LiveHub<BoardService>], origins: [String] = [],
        firstRequestTimeout: Duration = .seconds(10), helloTimeout: Duration = .seconds(10)
    ) {
        endpoint = LiveEndpoint(
            path: "/live", hubs: hubs,
            configuration: .init(
                extraOrigins: Set(origins), firstRequestTimeout: firstRequestTimeout, helloTimeout: helloTimeout,
                maxMessageBytes: Limits.frameLimit)
        ) { route in
            route.query["team"] ?? route.params["team"]
        }
    }

    /// The Hummingbird application serving the page (with the endpoint's `Content-Security-Policy`, which
    /// lets it open WebSockets to the `origins` too: a cluster's other nodes), the JavaScript client and the endpoint on
    /// `host:port` (port 0 picks a free one); `onRunning` receives the port once the server listens. Run
    /// it in one `ServiceGroup` before ``endpoint`` (so a shutdown drains the clients first).
    public func application(
        host: String = "127.0.0.1", port: Int, logger: Logger? = nil, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        endpoint.addRoutes(to: router)
        endpoint.addPage(BoardPage.html, to: router)
        var quiet = Logger(label: "live-server")
        quiet.logLevel = .warning
        return Application(
            router: router, server: endpoint.server, configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger ?? quiet)
    }
}

/// The page served at `/`, read once from the package's resources.
enum BoardPage {
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
        let reason = (error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(error)"
        return "cannot listen on \(host):\(port): \(reason)"
    }
}
