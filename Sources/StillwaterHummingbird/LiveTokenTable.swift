#if Hummingbird
import Synchronization

/// The tokens of several hubs, or tenants, by key (a team's name, say), each as a ``LiveTokens``, and
/// replaceable while serving: the key a client asks for and the token it presents are checked together.
///
/// Share one table among the services of an endpoint's hubs; replace its digests when they change
/// elsewhere (another server of a cluster, an admin's command) and the next hello is checked against the
/// new ones, while connections already open stay open.
///
/// ```swift
/// let table = LiveTokenTable(tokens: ["alpha": "alpha-secret-token"])
/// print(table.accepts("alpha-secret-token", for: "alpha"), table.accepts("alpha-secret-token", for: "beta"))
/// table.replaceDigests(["beta": LiveTokens.digest(of: "alpha-secret-token")])
/// print(table.accepts("alpha-secret-token", for: "alpha"), table.accepts("alpha-secret-token", for: "beta"))
/// // Prints "true false"
/// // Prints "false true"
/// ```
///
/// Cost: a check takes a lock for a dictionary lookup, then hashes the token once outside it.
public final class LiveTokenTable: Sendable {
    private let tokens: Mutex<[String: LiveTokens]>

    /// A table from each key's token digest (``LiveTokens/digest(of:)``), by key.
    ///
    /// - Precondition: Every digest is 32 bytes long.
    public init(digests: [String: [UInt8]]) {
        tokens = Mutex(digests.mapValues { LiveTokens(digests: [$0]) })
    }

    /// A table from each key's token, by key; only their digests are kept.
    public convenience init(tokens: [String: String]) {
        self.init(digests: tokens.mapValues(LiveTokens.digest(of:)))
    }

    /// Whether `token` is `key`'s token: `false` for an unknown key or a `nil` token. Constant time in the
    /// token's content (``LiveTokens/accepts(_:)``).
    public func accepts(_ token: String?, for key: String) -> Bool {
        tokens.withLock { $0[key] }?.accepts(token) ?? false
    }

    /// Replaces every key's digest (keys left out are no longer accepted): a token presented from now on
    /// is checked against these.
    ///
    /// - Precondition: Every digest is 32 bytes long.
    public func replaceDigests(_ digests: [String: [UInt8]]) {
        let replaced = digests.mapValues { LiveTokens(digests: [$0]) }
        tokens.withLock { $0 = replaced }
    }
}
#endif
