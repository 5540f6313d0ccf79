#if Hummingbird
import Foundation
import JWTKit
import StillwaterHummingbird
import StillwaterLive
import Testing

struct TeamClaims: JWTPayload {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var role: String
    func verify(using algorithm: some JWTAlgorithm) throws { try exp.verifyNotExpired() }
}

struct Member: Sendable, Equatable {
    var name: String
    var role: String
}

@Suite("Tokens to identities: the digest table and the JWT check")
struct LiveIdentityTests {
    @Test("the table admits a token as its identity, until its expiry; unknown, absent and revoked tokens are refused alike")
    func table() {
        let table = LiveIdentityTable<String>()
        let later = Date(timeIntervalSinceNow: 3_600)
        table.issue("ann-device-token", to: "ann")
        table.issue("bob-invite-token", to: "bob", expires: later)
        table.issue(digest: LiveTokens.digest(of: "cat-saved-token"), to: "cat")
        #expect(table.count == 3)
        guard case .accepted("ann") = table.authenticate(LiveHandshake(token: "ann-device-token")) else {
            Issue.record("ann was not admitted")
            return
        }
        guard case .acceptedUntil("bob", let expires) = table.authenticate(LiveHandshake(transport: ["authorization": "Bearer bob-invite-token"])) else {
            Issue.record("bob's bearer token was not admitted until its expiry")
            return
        }
        #expect(expires == later)
        guard case .accepted("cat") = table.authenticate(LiveHandshake(token: "cat-saved-token")) else {
            Issue.record("a token issued by its digest was not admitted")
            return
        }
        for handshake in [LiveHandshake(token: "guess"), LiveHandshake()] {
            guard case .refused("the credentials were refused") = table.authenticate(handshake) else {
                Issue.record("\(handshake) was admitted")
                return
            }
        }
        #expect(table.revoke { $0 == "ann" } == 1)
        guard case .refused = table.authenticate(LiveHandshake(token: "ann-device-token")) else {
            Issue.record("a revoked token was admitted")
            return
        }
        #expect(table.count == 2)
    }

    func check() async -> (LiveJWTCheck<TeamClaims, Member>, JWTKeyCollection) {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: "a-secret-of-the-tests-32-bytes-long"), digestAlgorithm: .sha256)
        let check = LiveJWTCheck<TeamClaims, Member>(keys: keys, expiry: { $0.exp.value }) { claims in
            claims.role == "member" || claims.role == "viewer" ? Member(name: claims.sub.value, role: claims.role) : nil
        }
        return (check, keys)
    }

    @Test("a valid JWT admits its claims' identity until its exp; an expired one is answered as an expiry; others are refused")
    func jwt() async throws {
        let (check, keys) = await check()
        let exp = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 600).rounded(.down))
        let valid = try await keys.sign(TeamClaims(sub: "ann", exp: ExpirationClaim(value: exp), role: "member"))
        guard case .acceptedUntil(let member, let expires) = await check.authenticate(LiveHandshake(token: valid)) else {
            Issue.record("a valid token was not admitted")
            return
        }
        #expect(member == Member(name: "ann", role: "member"))
        #expect(expires == exp)

        let past = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 60).rounded(.down))
        let expired = try await keys.sign(TeamClaims(sub: "bob", exp: ExpirationClaim(value: past), role: "viewer"))
        guard case .acceptedUntil(let bob, let when) = await check.authenticate(LiveHandshake(token: expired)) else {
            Issue.record("an expired token was not answered as an expiry")
            return
        }
        #expect(bob.name == "bob" && when == past)

        let otherKeys = JWTKeyCollection()
        await otherKeys.add(hmac: HMACKey(from: "another-secret-of-at-least-32-bytes"), digestAlgorithm: .sha256)
        let forged = try await otherKeys.sign(TeamClaims(sub: "eve", exp: ExpirationClaim(value: exp), role: "member"))
        let forgedExpired = try await otherKeys.sign(TeamClaims(sub: "eve", exp: ExpirationClaim(value: past), role: "member"))
        let unknownRole = try await keys.sign(TeamClaims(sub: "dan", exp: ExpirationClaim(value: exp), role: "admin"))
        for token in [forged, forgedExpired, unknownRole, "not.a.jwt", ""] {
            guard case .refused("the credentials were refused") = await check.authenticate(LiveHandshake(token: token)) else {
                Issue.record("\(token) was admitted")
                continue
            }
        }
    }
}
#endif
