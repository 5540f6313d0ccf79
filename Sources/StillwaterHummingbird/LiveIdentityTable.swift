#if Hummingbird
import Foundation
import StillwaterLive
import Synchronization

/// Who each secret token belongs to, kept only as the tokens' SHA-256 digests, with an expiry per
/// token: the answer of a service's `authenticate` for tokens the server issued itself (API keys,
/// invitation links, per-device tokens).
///
/// ```swift
/// let table = LiveIdentityTable<String>()
/// table.issue("ann-device-token", to: "ann")
/// table.issue("bob-invite-token", to: "bob", expires: Date(timeIntervalSinceNow: 3_600))
/// let handshake = LiveHandshake(token: "ann-device-token")
/// if case .accepted(let user) = table.authenticate(handshake) { print(user) }
/// table.revoke { $0 == "ann" }
/// if case .refused(let message) = table.authenticate(handshake) { print(message) }
/// // Prints "ann"
/// // Prints "the credentials were refused"
/// ```
///
/// A service's `authenticate` returns ``authenticate(_:)``; after ``revoke(where:)``, end the sessions
/// already open with `LiveHub.disconnect(where:reason:)`, which closes them (4403) now.
///
/// Cost: a check hashes the presented token once (about a microsecond for a short one) and looks its
/// digest up under a lock: O(1). The table holds the digests, never a token.
public final class LiveIdentityTable<Identity: Sendable>: Sendable {
    private struct Entry {
        var identity: Identity
        var expires: Date?
    }

    private let entries = Mutex<[[UInt8]: Entry]>([:])

    /// An empty table.
    public init() {}

    /// Lets `token` in as `identity`, until `expires` when given (then the session gets `token_expired`
    /// and close 4419 unless it renewed its credentials with a `reauth`). Only the token's digest is kept;
    /// a token issued again replaces its entry.
    public func issue(_ token: String, to identity: Identity, expires: Date? = nil) {
        issue(digest: LiveTokens.digest(of: token), to: identity, expires: expires)
    }

    /// Lets the token whose SHA-256 digest is `digest` in as `identity` (for digests saved earlier, so
    /// that the server's files hold no token).
    ///
    /// - Precondition: `digest` is 32 bytes long.
    public func issue(digest: [UInt8], to identity: Identity, expires: Date? = nil) {
        precondition(digest.count == 32, "LiveIdentityTable.issue(digest:to:expires:) takes a SHA-256 digest of 32 bytes (got \(digest.count))")
        entries.withLock { $0[digest] = Entry(identity: identity, expires: expires) }
    }

    /// Removes every token whose identity `matches`; returns how many. Tokens presented from now on are
    /// refused; sessions already open stay open until `LiveHub.disconnect(where:reason:)` ends them.
    ///
    /// - Complexity: O(n) in the tokens, under the table's lock: `matches` must not call the table.
    @discardableResult
    public func revoke(where matches: (Identity) -> Bool) -> Int {
        entries.withLock { entries in
            let before = entries.count
            entries = entries.filter { !matches($0.value.identity) }
            return before - entries.count
        }
    }

    /// The answer for `handshake`'s token (``LiveHandshake/presentedToken``: the hello's, or the
    /// upgrade's `Bearer` token): accepted as its identity (until its expiry), or refused with "the
    /// credentials were refused" for an unknown token or none. A token past its expiry is accepted until
    /// that time, which the hub answers with `token_expired` and 4419, so the client knows to renew.
    public func authenticate(_ handshake: LiveHandshake) -> LiveAuthentication<Identity> {
        guard let token = handshake.presentedToken else { return .refused(Self.refusal) }
        let digest = LiveTokens.digest(of: token)
        guard let entry = entries.withLock({ $0[digest] }) else { return .refused(Self.refusal) }
        guard let expires = entry.expires else { return .accepted(entry.identity) }
        return .acceptedUntil(entry.identity, expires: expires)
    }

    /// How many tokens are in the table.
    public var count: Int { entries.withLock { $0.count } }

    static var refusal: String { "the credentials were refused" }
}
#endif
