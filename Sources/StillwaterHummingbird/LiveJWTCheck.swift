#if Hummingbird
import Foundation
import JWTKit
import StillwaterLive

/// Admits clients that present a JSON Web Token signed by one of `keys` (through vapor's jwt-kit): the
/// token's claims name the identity, and its `exp` claim, when the check is told where it is, becomes the
/// session's expiry.
///
/// ```swift
/// import JWTKit
///
/// struct BoardClaims: JWTPayload {
///     var sub: SubjectClaim          // the user
///     var exp: ExpirationClaim       // when the token expires
///     var role: String               // "member" or "viewer"
///     func verify(using algorithm: some JWTAlgorithm) throws { try exp.verifyNotExpired() }
/// }
///
/// let keys = JWTKeyCollection()
/// await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
/// let check = LiveJWTCheck<BoardClaims, User>(keys: keys, expiry: { $0.exp.value }) { claims in
///     User(name: claims.sub.value, isMember: claims.role == "member")
/// }
/// // In the service: func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<User> {
/// //     await check.authenticate(handshake)
/// // }
/// ```
///
/// What a client gets:
/// - a valid token (signature and every claim the payload's `verify` checks): admitted, until `expiry`
///   when given: then `token_expired` and close 4419, unless a `reauth` frame brings a newer token;
/// - a token whose signature holds but whose `exp` has passed: `token_expired` and close 4419 at once,
///   so the client knows to fetch a new token rather than give up;
/// - no token, a malformed one, a wrong signature, another failed claim, or claims `identity` turns
///   down: `unauthorized` and close 4401, with one message for all ("the credentials were refused") so
///   that a client learns nothing of why.
///
/// Cost: one signature check per hello and per `reauth` (an HMAC over the token: microseconds; an RSA
/// or ECDSA check: tens to hundreds of microseconds).
public struct LiveJWTCheck<Claims: JWTPayload, Identity: Sendable>: Sendable {
    /// The keys tokens must be signed with (the `kid` of a token's header picks one).
    public let keys: JWTKeyCollection
    private let expiry: @Sendable (Claims) -> Date?
    private let identity: @Sendable (Claims) -> Identity?

    /// A check of tokens signed by `keys`.
    ///
    /// - Parameters:
    ///   - keys: The keys that sign valid tokens.
    ///   - expiry: When the session of a token with these claims ends (its `exp`, usually); nil (the
    ///     default) for never while connected.
    ///   - identity: Who the claims name, or nil to refuse them (a role the app does not know).
    public init(keys: JWTKeyCollection, expiry: @escaping @Sendable (Claims) -> Date? = { _ in nil },
                identity: @escaping @Sendable (Claims) -> Identity?) {
        self.keys = keys
        self.expiry = expiry
        self.identity = identity
    }

    /// The answer for `handshake`'s token (``LiveHandshake/presentedToken``: the hello's or the
    /// upgrade's `Bearer` token), as the type's documentation lists.
    public func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<Identity> {
        guard let token = handshake.presentedToken else { return .refused(Self.refusal) }
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure && error.failedClaim is ExpirationClaim {
            // The signature held (jwt-kit checks it before the claims): only the time is past. Answered
            // as an expiry, so the client renews its token.
            guard let expired = try? await keys.unverified(token, as: Claims.self), let identity = identity(expired) else {
                return .refused(Self.refusal)
            }
            return .acceptedUntil(identity, expires: expiry(expired) ?? .distantPast)
        } catch {
            return .refused(Self.refusal)
        }
        guard let identity = identity(claims) else { return .refused(Self.refusal) }
        guard let expires = expiry(claims) else { return .accepted(identity) }
        return .acceptedUntil(identity, expires: expires)
    }

    static var refusal: String { "the credentials were refused" }
}
#endif
