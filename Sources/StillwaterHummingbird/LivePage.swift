#if Hummingbird
import HTTPTypes
import Hummingbird
import NIOCore

extension LiveEndpoint {
    /// The `Content-Security-Policy` of a page that uses this endpoint: its scripts and styles from its own
    /// server only (inline ones allowed), its WebSockets to its own server or to the
    /// ``Configuration/extraOrigins``' (`http://node2:8082` allows `ws://node2:8082`, `https://` allows
    /// `wss://`), and no framing by other sites.
    ///
    /// ```swift
    /// let live = LiveEndpoint(path: "/live", hub: hub, configuration: .init(extraOrigins: ["https://board.example"]))
    /// print(live.contentSecurityPolicy)
    /// // Prints "default-src 'self'; connect-src 'self' wss://board.example; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
    /// ```
    public var contentSecurityPolicy: String {
        let sockets = configuration.extraOrigins.sorted().map { origin in
            origin.hasPrefix("https://") ? "wss://" + origin.dropFirst(8) : "ws://" + origin.dropFirst(7)
        }
        return "default-src 'self'; connect-src " + (["'self'"] + sockets).joined(separator: " ")
            + "; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
    }

    /// Adds `GET` and `HEAD` of `path` to `router`, answering with `html` as the page that uses this
    /// endpoint: UTF-8 HTML with ``contentSecurityPolicy``, `Cache-Control: no-store` (a reload always
    /// gets the server's page) and `Referrer-Policy: no-referrer` (a link followed from the page does not
    /// carry its address, which may hold a share link's team).
    ///
    /// Cost: the page's bytes are made once; each request copies a reference to them.
    public func addPage<Context: RequestContext>(_ html: String, at path: String = "/", to router: Router<Context>) {
        let headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
            .init("Content-Security-Policy")!: contentSecurityPolicy, .init("Referrer-Policy")!: "no-referrer",
        ]
        let page = ByteBuffer(string: html)
        router.head(RouterPath(path)) { _, _ in Response(status: .ok, headers: headers) }
        router.get(RouterPath(path)) { _, _ in Response(status: .ok, headers: headers, body: .init(byteBuffer: page)) }
    }
}
#endif
