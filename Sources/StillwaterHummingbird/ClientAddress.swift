#if Hummingbird
import HTTPTypes
import NIOCore

/// The client's address for the handshake's `transport["address"]`: the socket's peer, or, when the peer
/// is a trusted proxy, the address that proxy says it served (`X-Forwarded-For`).
///
/// `X-Forwarded-For` is a list each proxy appends to (`client, proxy1, proxy2`); anyone can send one, so
/// only the entries added by trusted proxies are believed. Walking from the right, each entry is the
/// address the hop before it saw: it is taken as long as the hop that added it is trusted, and the walk
/// stops at the first address that is not a trusted proxy (the client), at the first entry that is not an
/// address, or when the list runs out. A peer that is not trusted is the client, whatever it sends.
enum ClientAddress {
    /// The `X-Forwarded-For` header field's name.
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The client's address for a connection from `peer` whose request carried `forwardedFor` (the values
    /// of every `X-Forwarded-For` field, in order), believing only the proxies in `trusted`.
    static func resolve(peer: String?, forwardedFor: [String], trusted: [AddressRange]) -> String? {
        guard let peer, !trusted.isEmpty else { return peer }
        func isTrusted(_ address: String) -> Bool {
            guard let bytes = AddressRange.bytes(of: address) else { return false }
            return trusted.contains { $0.contains(bytes) }
        }
        let entries = forwardedFor.flatMap { $0.split(separator: ",") }
        var client = peer
        var index = entries.endIndex
        while index > entries.startIndex, isTrusted(client) {
            index -= 1
            var entry = Substring(entries[index]).drop(while: { $0 == " " || $0 == "\t" })
            while let last = entry.last, last == " " || last == "\t" { entry = entry.dropLast() }
            if entry.hasPrefix("["), entry.hasSuffix("]") { entry = entry.dropFirst().dropLast() }
            // Not an address ("unknown", a name, a port appended): the last trusted hop is all that is known.
            guard let canonical = AddressRange.canonical(String(entry)) else { break }
            client = canonical
        }
        return client
    }
}

/// One address (`203.0.113.5`, `::1`) or a range of them in CIDR notation (`10.0.0.0/8`, `fd00::/8`).
/// An IPv4 address given as IPv4-mapped IPv6 (`::ffff:127.0.0.1`, as a dual-stack socket reports it)
/// is the IPv4 address.
struct AddressRange: Hashable, Sendable {
    /// The network's bytes: 4 for IPv4, 16 for IPv6.
    var bytes: [UInt8]
    /// How many leading bits of an address must equal ``bytes``'.
    var prefixLength: Int

    /// Parses `text`; nil when it is neither an address nor an address with a prefix length in range.
    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = Self.bytes(of: String(parts[0])) else { return nil }
        let bits = bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length), parts[1].allSatisfy(\.isASCII) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        self.bytes = bytes
    }

    /// Whether `address` (4 or 16 bytes, as ``bytes(of:)`` gives them) is in the range.
    func contains(_ address: [UInt8]) -> Bool {
        guard address.count == bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(bytes, address) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }

    /// The bytes of an IP address in text (4 for IPv4 and IPv4-mapped IPv6, else 16), or nil.
    static func bytes(of text: String) -> [UInt8]? {
        guard let address = try? SocketAddress(ipAddress: text, port: 0) else { return nil }
        switch address {
        case .v4(let v4):
            return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            let mapped = bytes[..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            return mapped ? Array(bytes[12...]) : bytes
        default:
            return nil
        }
    }

    /// `text` written the usual way (`::1` for `0:0:0:0:0:0:0:1`, `127.0.0.1` for `::ffff:127.0.0.1`),
    /// or nil when it is no IP address.
    static func canonical(_ text: String) -> String? {
        guard let bytes = bytes(of: text) else { return nil }
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return (try? SocketAddress(ipAddress: text, port: 0))?.ipAddress
    }
}
#endif
