#if Hummingbird
import Crypto
import StillwaterLive

/// The secret tokens that may connect, kept only as their SHA-256 digests, and checked in constant time.
///
/// Keep a `LiveTokens` (or its ``digests``, saved where your server keeps its settings) instead of the
/// tokens themselves: neither the server's memory nor its files then hold a token a reader could reuse.
/// Call ``accepts(_:)`` from your service's `authenticate`:
///
/// ```swift
/// let tokens = LiveTokens(["alpha-secret-token"])
/// print(tokens.accepts("alpha-secret-token"), tokens.accepts("guess"), tokens.accepts(nil))
/// // Prints "true false false"
/// ```
///
/// Several tokens may be valid at once (an old and a new one while clients move over). A check hashes
/// the presented token once (about a microsecond for a short token) and compares it with every digest;
/// the time it takes does not depend on which bytes match, nor on which digest matched.
public struct LiveTokens: Sendable, Equatable {
    /// The SHA-256 digest (32 bytes) of each token that may connect, in the order given.
    public let digests: [[UInt8]]

    /// Tokens from their SHA-256 digests (as ``digest(of:)`` makes them, saved earlier).
    ///
    /// - Precondition: Every digest is 32 bytes long.
    public init(digests: some Sequence<[UInt8]>) {
        let digests = Array(digests)
        for digest in digests {
            precondition(digest.count == 32, "LiveTokens(digests:) takes SHA-256 digests of 32 bytes (got one of \(digest.count))")
        }
        self.digests = digests
    }

    /// Tokens from the tokens themselves; only their digests are kept.
    public init(_ tokens: some Sequence<String>) {
        self.init(digests: tokens.map(Self.digest(of:)))
    }

    /// Whether `token` is one of the tokens. `false` for `nil` and for an empty set.
    public func accepts(_ token: String?) -> Bool {
        guard let token else { return false }
        let presented = Self.digest(of: token)
        // Every digest is compared, so the time does not tell which one matched.
        var matched = false
        for digest in digests where Self.constantTimeEqual(presented, digest) { matched = true }
        return matched
    }

    /// The SHA-256 digest of `token`'s UTF-8 bytes: 32 bytes.
    public static func digest(of token: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(token.utf8)))
    }

    /// `digest` as text to save: lowercase hexadecimal, two digits a byte (64 for a SHA-256 digest).
    ///
    /// ```swift
    /// let text = LiveTokens.hexadecimal(LiveTokens.digest(of: "alpha-secret-token"))
    /// print(text.count, LiveTokens.digest(hexadecimal: text) == LiveTokens.digest(of: "alpha-secret-token"))
    /// // Prints "64 true"
    /// ```
    public static func hexadecimal(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// The digest that ``hexadecimal(_:)`` wrote: 32 bytes, or `nil` when `text` is not 64 hexadecimal
    /// digits (either case).
    public static func digest(hexadecimal text: String) -> [UInt8]? {
        guard text.utf8.count == 64 else { return nil }
        var nibbles: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibbles.append(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibbles.append(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        return stride(from: 0, to: 64, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] }
    }

    /// A new random token: 32 bytes from the system's secure generator, in URL-safe Base64 without
    /// padding (43 characters of `A`–`Z`, `a`–`z`, `0`–`9`, `-` and `_`).
    public static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return base64URL(bytes)
    }

    /// The token of an `Authorization` header value `Bearer TOKEN`, or `nil` for another scheme or no
    /// token. The scheme is case-insensitive (as HTTP says); spaces around the token are dropped.
    ///
    /// ```swift
    /// print(LiveTokens.bearerToken(in: "bearer abc") ?? "none", LiveTokens.bearerToken(in: "Basic abc") ?? "none")
    /// // Prints "abc none"
    /// ```
    public static func bearerToken(in header: String) -> String? {
        let trimmed = header.drop(while: { $0 == " " })
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bearer" else { return nil }
        let token = trimmed[space...].drop(while: { $0 == " " })
        let end = token.lastIndex(where: { $0 != " " }).map { token.index(after: $0) } ?? token.startIndex
        return end == token.startIndex ? nil : String(token[..<end])
    }

    /// Whether two byte arrays are equal, in time that depends on their length only.
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// `bytes` in URL-safe Base64 without padding.
    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count { out.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension LiveHandshake {
    /// The token the client presented: its hello frame's `token`, else the `Bearer` token of the
    /// upgrade's `Authorization` header (which ``LiveEndpoint`` passes as the transport's
    /// `authorization`); `nil` when it gave neither.
    ///
    /// ```swift
    /// let handshake = LiveHandshake(transport: ["authorization": "Bearer abc"])
    /// print(handshake.presentedToken ?? "none")
    /// // Prints "abc"
    /// ```
    public var presentedToken: String? {
        token ?? transport["authorization"].flatMap(LiveTokens.bearerToken(in:))
    }
}
#endif
