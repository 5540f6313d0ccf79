import Foundation
import Hummingbird
import Logging
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
    /// `/metrics`, `/healthz` and `/readyz`, when served.
    public let operations: BoardOperations?

    /// A server for `hubs`, by team; `origins` are the page origins allowed besides the server's own
    /// (`scheme://host[:port]`, for a proxy or a cluster's other nodes), `trustedProxies` the reverse
    /// proxies whose `X-Forwarded-For` gives a connection's address (IP addresses or CIDR ranges). A new
    /// connection has `firstRequestTimeout` to send its request, an upgraded one `helloTimeout` to send its
    /// hello. `operations`, when given, adds `/metrics`, `/healthz` and `/readyz`.
    public init(
        hubs: [String: LiveHub<BoardService>], origins: [String] = [], trustedProxies: [String] = [],
        firstRequestTimeout: Duration = .seconds(10), helloTimeout: Duration = .seconds(10), operations: BoardOperations? = nil
    ) {
        self.operations = operations
        endpoint = LiveEndpoint(
            path: "/live", hubs: hubs,
            configuration: .init(
                extraOrigins: Set(origins), firstRequestTimeout: firstRequestTimeout, helloTimeout: helloTimeout,
                maxMessageBytes: Limits.frameLimit, trustedProxies: Set(trustedProxies))
        ) { route in
            route.query["team"] ?? route.params["team"]
        }
    }

    /// The Hummingbird application serving the page (with the endpoint's `Content-Security-Policy`, which
    /// lets it open WebSockets to the `origins` too: a cluster's other nodes), the JavaScript client and the
    /// endpoint on `host:port`, as `LiveEndpoint.application(page:host:port:logger:onRunning:)` makes it.
    public func application(
        host: String = "127.0.0.1", port: Int, logger: Logger? = nil, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        endpoint.application(routes: { [operations] in operations?.addRoutes(to: $0) }, page: BoardPage.html, host: host, port: port,
                             logger: logger, onRunning: onRunning)
    }

    /// Serves what ``application(host:port:logger:onRunning:)`` does until SIGTERM or SIGINT, then drains
    /// the clients, as `LiveEndpoint.run(page:host:port:logger:onRunning:)` does.
    ///
    /// - Throws: `LiveListenError` when the address cannot be listened on.
    public func run(host: String, port: Int, onRunning: @escaping @Sendable (Int) async -> Void) async throws {
        try await endpoint.run(routes: { [operations] in operations?.addRoutes(to: $0) }, page: BoardPage.html, host: host, port: port,
                               onRunning: onRunning)
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
