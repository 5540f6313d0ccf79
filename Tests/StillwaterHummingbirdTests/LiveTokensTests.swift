#if Hummingbird
import StillwaterHummingbird
import StillwaterLive
import Testing

@Suite("LiveTokens")
struct LiveTokensTests {
    @Test("a token is accepted when one of the digests is its own, whichever; nil and others are not")
    func accepts() {
        let tokens = LiveTokens(["old-token-for-tests", "new-token-for-tests"])
        #expect(tokens.accepts("old-token-for-tests"))
        #expect(tokens.accepts("new-token-for-tests"))
        #expect(!tokens.accepts("new-token-for-test"))
        #expect(!tokens.accepts(""))
        #expect(!tokens.accepts(nil))
        #expect(!LiveTokens([String]()).accepts("anything"))
    }

    @Test("only digests are kept, and tokens made from saved digests check the same")
    func digestsAtRest() {
        let tokens = LiveTokens(["secret-token-for-tests"])
        #expect(tokens.digests == [LiveTokens.digest(of: "secret-token-for-tests")])
        #expect(tokens.digests[0].count == 32)
        #expect(!tokens.digests[0].elementsEqual(Array("secret-token-for-tests".utf8).prefix(32)))
        let restored = LiveTokens(digests: tokens.digests)
        #expect(restored == tokens)
        #expect(restored.accepts("secret-token-for-tests"))
        // The SHA-256 of "abc", as every implementation gives it.
        let hex: [String] = LiveTokens.digest(of: "abc").map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        #expect(hex.joined() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("a digest that is not 32 bytes long stops the program, naming the argument")
    func shortDigest() async {
        await #expect(processExitsWith: .failure) {
            _ = LiveTokens(digests: [[1, 2, 3]])
        }
    }

    @Test("new tokens are 43 URL-safe characters and differ")
    func newTokens() {
        let made = (0..<50).map { _ in LiveTokens.newToken() }
        #expect(Set(made).count == made.count)
        for token in made {
            #expect(token.count == 43)
            #expect(token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        }
    }

    @Test("the Bearer token of an Authorization header, in any case; nil for other schemes or none")
    func bearer() {
        #expect(LiveTokens.bearerToken(in: "Bearer abc") == "abc")
        #expect(LiveTokens.bearerToken(in: "bearer   abc  ") == "abc")
        #expect(LiveTokens.bearerToken(in: "BEARER abc") == "abc")
        #expect(LiveTokens.bearerToken(in: "Bearer ") == nil)
        #expect(LiveTokens.bearerToken(in: "Basic YWxwaGE6eA==") == nil)
        #expect(LiveTokens.bearerToken(in: "abc") == nil)
        #expect(LiveHandshake(token: "hello", transport: ["authorization": "Bearer header"]).presentedToken == "hello")
        #expect(LiveHandshake(transport: ["authorization": "Bearer header"]).presentedToken == "header")
        #expect(LiveHandshake().presentedToken == nil)
    }
}

@Suite("LiveTokens as text, and LiveTokenTable")
struct LiveTokenTableTests {
    @Test("a digest written as hexadecimal reads back; text that is not 64 hexadecimal digits does not")
    func hexadecimal() {
        let digest = LiveTokens.digest(of: "alpha-secret-token")
        let text = LiveTokens.hexadecimal(digest)
        #expect(text.count == 64)
        #expect(text.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(LiveTokens.hexadecimal([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(LiveTokens.digest(hexadecimal: text) == digest)
        #expect(LiveTokens.digest(hexadecimal: text.uppercased()) == digest)
        for bad in ["", String(text.dropLast()), text + "0", String(text.dropLast()) + "g", String(repeating: "+1", count: 32)] {
            #expect(LiveTokens.digest(hexadecimal: bad) == nil, "\(bad)")
        }
    }

    @Test("a key's token is accepted for that key only; replaced digests count from the next check, and keys left out are refused")
    func replacedDigests() {
        let table = LiveTokenTable(tokens: ["alpha": "first-token-0000000", "beta": "beta-token-00000000"])
        #expect(table.accepts("first-token-0000000", for: "alpha"))
        #expect(!table.accepts("first-token-0000001", for: "alpha"))
        #expect(!table.accepts("first-token-0000000", for: "beta"))
        #expect(!table.accepts("first-token-0000000", for: "gamma"))
        #expect(!table.accepts(nil, for: "alpha"))
        table.replaceDigests(["alpha": LiveTokens.digest(of: "second-token-000000")])
        #expect(!table.accepts("first-token-0000000", for: "alpha"))
        #expect(table.accepts("second-token-000000", for: "alpha"))
        #expect(!table.accepts("beta-token-00000000", for: "beta"))
    }
}
#endif
