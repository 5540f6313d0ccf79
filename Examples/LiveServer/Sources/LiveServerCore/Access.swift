import Crypto
import Foundation

/// Who may open a team's board: each team's secret token, and the web origins whose pages may connect.
///
/// Tokens are kept as their SHA-256 digests, so neither the server's memory nor its data folder holds a
/// token a reader could reuse, and a presented token is compared with the team's in constant time (the
/// time taken does not depend on how many bytes match). A token is sent in the `Authorization: Bearer`
/// header (the scheme in any case) of the WebSocket upgrade, or in the first frame (`{"type":"hello","token":"…"}`, which is what
/// the page does); never in a URL, which servers and proxies log.
///
/// The `Origin` check stops a page from another site, open in the same browser, from using a board
/// through it: a browser names the page's origin in every WebSocket upgrade, and a page cannot change it.
/// (A site that points a name of its own at this server, DNS rebinding, passes the check, since origin
/// and `Host` then agree; it still has no token.) An upgrade
/// with no `Origin`, or with a `ws://` or `wss://` one (which no browser sends as a page's origin; some
/// WebSocket client libraries do), comes from a program, not a page: it passes this check and still needs
/// the token.
public struct AccessPolicy: Sendable {
    /// The SHA-256 digest of each team's token, by team name, shared by every copy of the policy (so a
    /// cluster node can change the server's as the database's change: ``replaceTokenDigests(_:)``).
    private let digests: Locked<[String: [UInt8]]>

    /// The SHA-256 digest of each team's token, by team name.
    public var tokenDigests: [String: [UInt8]] { digests.withLock { $0 } }
    /// Origins allowed besides the server's own (`scheme://host[:port]`, compared in lowercase), for a
    /// page served through a proxy under another name.
    public var extraOrigins: Set<String>

    /// Creates a policy from each team's token digest (``digest(of:)``) and the extra allowed origins.
    public init(tokenDigests: [String: [UInt8]], extraOrigins: Set<String> = []) {
        digests = Locked(tokenDigests)
        // Origins are compared in lowercase: scheme and host are case-insensitive.
        self.extraOrigins = Set(extraOrigins.map { $0.lowercased() })
    }

    /// Creates a policy from each team's token.
    public init(tokens: [String: String], extraOrigins: Set<String> = []) {
        self.init(tokenDigests: tokens.mapValues(Self.digest(of:)), extraOrigins: extraOrigins)
    }

    /// The token of an `Authorization` header value `Bearer TOKEN`, or `nil` for another scheme. The
    /// scheme is case-insensitive (`bearer TOKEN` too, as HTTP says); spaces around the token are dropped.
    ///
    /// ```swift
    /// print(AccessPolicy.bearerToken(in: "bearer abc") ?? "none", AccessPolicy.bearerToken(in: "Basic abc") ?? "none")
    /// // Prints "abc none"
    /// ```
    public static func bearerToken(in header: String) -> String? {
        let trimmed = header.drop(while: { $0 == " " })
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bearer" else { return nil }
        let token = trimmed[space...].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// Replaces the token digests of this policy and of every copy of it (the server's included): a
    /// token presented from now on is checked against these; connections already open stay open.
    public func replaceTokenDigests(_ tokenDigests: [String: [UInt8]]) {
        digests.withLock { $0 = tokenDigests }
    }

    /// The SHA-256 digest of `token`'s UTF-8 bytes.
    public static func digest(of token: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(token.utf8)))
    }

    /// Whether `token` is `team`'s token. Constant time in the token's content; `false` for an unknown team.
    public func allows(team: String, token: String) -> Bool {
        guard let expected = digests.withLock({ $0[team] }) else { return false }
        return Self.constantTimeEqual(Self.digest(of: token), expected)
    }

    /// The page's `Content-Security-Policy`: its scripts and styles from this server only, and its
    /// WebSockets to this server or to those of ``extraOrigins`` (the other nodes of a cluster, whose
    /// addresses the page may be given: `http://node2:8082` allows `ws://node2:8082`).
    public var contentSecurityPolicy: String {
        let sockets = extraOrigins.sorted().map { origin in
            origin.hasPrefix("https://") ? "wss://" + origin.dropFirst(8) : "ws://" + origin.dropFirst(7)
        }
        return "default-src 'self'; connect-src " + (["'self'"] + sockets).joined(separator: " ")
            + "; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'"
    }

    /// Whether a WebSocket upgrade with this `Origin` header may proceed, for a request that named
    /// `authority` (its `Host`): no origin or a `ws://`/`wss://` one (not a browser page), the request's
    /// own origin (`http://` or `https://` and the same host and port), or one of ``extraOrigins``.
    public func allowsOrigin(_ origin: String?, authority: String?) -> Bool {
        guard let origin else { return true }
        let lowered = origin.lowercased()
        if lowered.hasPrefix("ws://") || lowered.hasPrefix("wss://") || extraOrigins.contains(lowered) { return true }
        guard let authority, !authority.isEmpty else { return false }
        let host = authority.lowercased()
        return lowered == "http://" + host || lowered == "https://" + host
    }

    /// Whether two byte arrays are equal, in time that depends on their length only.
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// A new random token: 32 bytes from the system's secure generator, in URL-safe Base64 (43 characters).
    public static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The first frame of a client that did not send its token in a header: `{"type":"hello","token":"…"}`.
enum HelloFrame {
    /// The token of a hello frame, or `nil` when `text` is not one.
    static func token(in text: String) -> String? {
        guard text.utf8.count <= Limits.frame, let hello = try? JSONReader.parse(text),
              hello["type"]?.string == "hello"
        else { return nil }
        return hello["token"]?.string
    }
}
