import StillwaterHummingbird
import Synchronization

/// Each team's token, kept as its SHA-256 digest in a `LiveTokens` (so neither the server's memory nor
/// its data folder holds a token a reader could reuse, and a presented token is compared in constant
/// time). One policy is shared by every board's service, so a cluster node replaces the digests as the
/// database's change (``replaceTokenDigests(_:)``) and the next hello is checked against the new ones.
///
/// ```swift
/// let access = AccessPolicy(tokens: ["alpha": "alpha-secret-token"])
/// print(access.allows(team: "alpha", token: "alpha-secret-token"), access.allows(team: "beta", token: "alpha-secret-token"))
/// // Prints "true false"
/// ```
public final class AccessPolicy: Sendable {
    private let teams: Mutex<[String: LiveTokens]>

    /// A policy from each team's token digest (`LiveTokens.digest(of:)`), by team.
    public init(tokenDigests: [String: [UInt8]]) {
        teams = Mutex(tokenDigests.mapValues { LiveTokens(digests: [$0]) })
    }

    /// A policy from each team's token, by team.
    public convenience init(tokens: [String: String]) {
        self.init(tokenDigests: tokens.mapValues(LiveTokens.digest(of:)))
    }

    /// Whether `token` is `team`'s token; `false` for an unknown team. Constant time in the token's content.
    public func allows(team: String, token: String) -> Bool {
        teams.withLock { $0[team] }?.accepts(token) ?? false
    }

    /// Replaces every team's digest: a token presented from now on is checked against these; connections
    /// already open stay open.
    public func replaceTokenDigests(_ tokenDigests: [String: [UInt8]]) {
        let tokens = tokenDigests.mapValues { LiveTokens(digests: [$0]) }
        teams.withLock { $0 = tokens }
    }
}
