#if Hummingbird
import HTTPTypes
@testable import StillwaterHummingbird
import Testing

@Suite("ClientAddress: X-Forwarded-For believed only from trusted proxies")
struct ClientAddressTests {
    static let proxies = ["127.0.0.1", "10.0.0.0/8", "fd00::/8"].compactMap(AddressRange.init)

    @Test("the address a connection is shown with", arguments: [
        // (peer, X-Forwarded-For fields, expected)
        ("198.51.100.4", ["203.0.113.7"], "198.51.100.4"),               // a peer that is no proxy: its own address
        ("127.0.0.1", [], "127.0.0.1"),                                  // a trusted proxy that forwards nothing
        ("127.0.0.1", ["203.0.113.7"], "203.0.113.7"),                   // the address the proxy saw
        ("127.0.0.1", ["198.51.100.9, 203.0.113.7"], "203.0.113.7"),     // what the client claimed before it is not believed
        ("127.0.0.1", ["203.0.113.7, 10.1.2.3"], "203.0.113.7"),         // two trusted hops
        ("127.0.0.1", ["203.0.113.7", "10.1.2.3"], "203.0.113.7"),       // the same, in two header fields
        ("10.9.9.9", ["10.1.2.3,10.4.5.6"], "10.1.2.3"),                 // every hop trusted: the first one named
        ("127.0.0.1", ["203.0.113.7, unknown"], "127.0.0.1"),            // not an address: the last trusted hop
        ("127.0.0.1", ["203.0.113.7:4711"], "127.0.0.1"),                // with a port: not read
        ("127.0.0.1", ["  2001:DB8::1 "], "2001:db8::1"),                // IPv6, written the usual way
        ("127.0.0.1", ["[2001:db8::1]"], "2001:db8::1"),                 // IPv6 in brackets
        ("::ffff:127.0.0.1", ["203.0.113.7"], "203.0.113.7"),            // a dual-stack socket's IPv4 peer
        ("127.0.0.1", ["::ffff:203.0.113.7"], "203.0.113.7"),
        ("fd12::5", ["2001:db8::2"], "2001:db8::2"),                     // an IPv6 range
        ("fe80::1", ["2001:db8::2"], "fe80::1"),                         // outside it
        ("127.0.0.2", ["203.0.113.7"], "127.0.0.2"),                     // 127.0.0.1 is one address, not a range
    ])
    func resolved(peer: String, forwardedFor: [String], expected: String) {
        #expect(ClientAddress.resolve(peer: peer, forwardedFor: forwardedFor, trusted: Self.proxies) == expected)
    }

    @Test("with no trusted proxy, X-Forwarded-For is never read")
    func nothingTrusted() {
        #expect(ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: ["203.0.113.7"], trusted: []) == "127.0.0.1")
        #expect(ClientAddress.resolve(peer: nil, forwardedFor: ["203.0.113.7"], trusted: Self.proxies) == nil)
    }

    @Test("trusted proxies are addresses or CIDR ranges; anything else is not", arguments: [
        ("127.0.0.1", true), ("::1", true), ("10.0.0.0/8", true), ("0.0.0.0/0", true), ("fd00::/8", true), ("::/128", true),
        ("10.0.0.0/33", false), ("fd00::/129", false), ("10.0.0.0/", false), ("10.0.0.0/-1", false), ("localhost", false),
        ("127.1", false), ("", false), ("10.0.0.0/8/8", false), ("1.2.3.4 ", false),
    ])
    func entries(entry: String, valid: Bool) {
        #expect(LiveEndpoint<CounterService>.Configuration.isTrustedProxy(entry) == valid)
    }

    @Test("a range holds the addresses that share its prefix")
    func ranges() throws {
        let range = try #require(AddressRange("192.168.4.0/22"))
        for (address, inside) in [("192.168.4.1", true), ("192.168.7.255", true), ("192.168.8.0", false), ("192.168.3.255", false)] {
            #expect(range.contains(try #require(AddressRange.bytes(of: address))) == inside, "\(address)")
        }
        #expect(!range.contains(try #require(AddressRange.bytes(of: "::1"))))
    }
}

@Suite("LiveEndpoint: the client's address behind a proxy", .timeLimit(.minutes(5)))
struct LiveEndpointForwardingTests {
    /// The address the service is shown for an upgrade with `forwardedFor`, on an endpoint trusting `proxies`.
    func address(trusting proxies: Set<String>, forwardedFor: String?) async throws -> String? {
        let seen = Locked<[String]>([])
        let hub = try await counterHub(service: CounterService(addresses: seen))
        var result: String?
        try await withServer(LiveEndpoint(hub: hub, configuration: .init(trustedProxies: proxies))) { served in
            var headers = HTTPFields()
            if let forwardedFor { headers[ClientAddress.forwardedFor] = forwardedFor }
            let client = LiveTestClient(port: served.port, headers: headers, first: [hello(token: CounterService.token)])
            try await eventually("the admission") { !seen.withLock { $0 }.isEmpty }
            result = seen.withLock { $0.first }
            await client.close()
        }
        return result
    }

    @Test("a trusted peer's X-Forwarded-For is the address the service sees; an untrusted peer's is ignored")
    func forwarded() async throws {
        #expect(try await address(trusting: ["127.0.0.1"], forwardedFor: "198.51.100.9, 203.0.113.7") == "203.0.113.7")
        #expect(try await address(trusting: ["127.0.0.1"], forwardedFor: nil) == "127.0.0.1")
        #expect(try await address(trusting: [], forwardedFor: "203.0.113.7") == "127.0.0.1")
        #expect(try await address(trusting: ["10.0.0.0/8"], forwardedFor: "203.0.113.7") == "127.0.0.1")
    }
}
#endif
