import Foundation
import Stillwater
import StillwaterLive
import Testing

@Suite("LiveClient numbers its commands under the id its welcome gave", .timeLimit(.minutes(5)))
struct LiveClientNumberingTests {
    static let id = "c018bcfe56800-0123456789abcdef"
    static let welcome = #"{"type":"welcome","protocol":1,"stream":"s-5f0c1e2d3c4b5a69","window":64,"client":"\#(id)"}"#
    static let snapshot = LiveClientScriptedTests.snapshot

    func live() async throws -> (ScriptedTransport, BoardClient) {
        let transport = ScriptedTransport()
        let client = BoardClient(transport: transport, token: "s3cret", options: quickOptions)
        try #require(await eventually { transport.connectionCount == 1 && !transport.sent(on: 0).isEmpty })
        transport.serve(0, [Self.welcome, Self.snapshot])
        try #require(await eventually { client.view.value?.title == "Groceries" })
        return (transport, client)
    }

    /// The command frames sent on connection `index`, as objects.
    func commands(_ transport: ScriptedTransport, on index: Int) -> [[String: Any]] {
        transport.sent(on: index).map(object).filter { $0["type"] as? String == "command" }
    }

    func ack(_ frame: [String: Any], version: Int, duplicate: Bool = false) -> String {
        #"{"type":"ack","ref":\#(frame["ref"] as? Int ?? 0),"seq":\#(frame["seq"] as? Int ?? 0),"version":\#(version)\#(duplicate ? #","duplicate":true"# : "")}"#
    }

    @Test("commands carry seq 1, 2, 3; after a reconnect the hello names the id and unanswered commands keep their numbers")
    func numbersAcrossReconnect() async throws {
        let (transport, client) = try await live()
        async let first = client.send(.add(text: "a"))
        async let second = client.send(.add(text: "b"))
        #expect(await eventually { commands(transport, on: 0).count == 2 })
        let sent = commands(transport, on: 0)
        #expect(Set(sent.compactMap { $0["seq"] as? Int }) == [1, 2])
        let one = try #require(sent.first { $0["seq"] as? Int == 1 })
        transport.serve(0, [ack(one, version: 42)], close: 1001)
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect(object(transport.sent(on: 1)[0])["client"] as? String == Self.id)
        transport.serve(1, [Self.welcome, #"{"type":"patch","from":41,"version":42}"#])
        #expect(await eventually { commands(transport, on: 1).count == 1 })
        let resent = commands(transport, on: 1)[0]
        #expect(resent["seq"] as? Int == 2)
        transport.serve(1, [ack(resent, version: 43, duplicate: true)])
        let outcomes = try await [first, second]
        #expect(Set(outcomes.map { "\($0)" }) == ["applied(version: 42)", "duplicate(version: 43)"])
        await client.close()
    }

    @Test("out_of_order: the commands from the expected number go again, in order, none before an earlier one")
    func outOfOrder() async throws {
        let (transport, client) = try await live()
        async let first = client.send(.add(text: "a"))
        #expect(await eventually { commands(transport, on: 0).count == 1 })
        async let second = client.send(.add(text: "b"))
        #expect(await eventually { commands(transport, on: 0).count == 2 })
        let sent = commands(transport, on: 0)
        // The first was not recorded (unavailable); the second came too early.
        transport.serve(0, [
            #"{"type":"error","code":"unavailable","message":"busy","ref":\#(sent[0]["ref"] as? Int ?? 0),"seq":1,"retry":true}"#,
            #"{"type":"error","code":"out_of_order","message":"send 1 first","ref":\#(sent[1]["ref"] as? Int ?? 0),"seq":2,"expected":1,"retry":true}"#,
        ])
        #expect(await eventually { commands(transport, on: 0).count == 4 })
        let again = commands(transport, on: 0).suffix(2).map { $0["seq"] as? Int }
        #expect(again == [1, 2])
        let resent = Array(commands(transport, on: 0).suffix(2))
        transport.serve(0, [ack(resent[0], version: 42), ack(resent[1], version: 43)])
        #expect(try await first == .applied(version: 42))
        #expect(try await second == .applied(version: 43))
        await client.close()
    }

    @Test("a number the server did not use (bad_command) is given to the next command")
    func unusedNumber() async throws {
        let (transport, client) = try await live()
        async let bad = client.send(.add(text: "a"))
        #expect(await eventually { commands(transport, on: 0).count == 1 })
        async let good = client.send(.add(text: "b"))
        #expect(await eventually { commands(transport, on: 0).count == 2 })
        let sent = commands(transport, on: 0)
        transport.serve(0, [
            #"{"type":"error","code":"bad_command","message":"no","ref":\#(sent[0]["ref"] as? Int ?? 0),"seq":1}"#,
            #"{"type":"error","code":"out_of_order","message":"send 1 first","ref":\#(sent[1]["ref"] as? Int ?? 0),"seq":2,"expected":1,"retry":true}"#,
        ])
        let refusal: LiveClientError?
        do {
            _ = try await bad
            refusal = nil
        } catch {
            refusal = error as? LiveClientError
        }
        #expect(refusal == .refusedFrame(code: "bad_command", message: "no"))
        #expect(await eventually { commands(transport, on: 0).count == 3 })
        let renumbered = commands(transport, on: 0)[2]
        #expect(renumbered["seq"] as? Int == 1)
        transport.serve(0, [ack(renumbered, version: 42)])
        #expect(try await good == .applied(version: 42))
        await client.close()
    }

    @Test("client_expired: the numbered commands are answered so, and the next hello names no id")
    func expired() async throws {
        let (transport, client) = try await live()
        async let outcome = client.send(.add(text: "a"))
        #expect(await eventually { commands(transport, on: 0).count == 1 })
        let sent = commands(transport, on: 0)[0]
        transport.serve(0, [#"{"type":"error","code":"client_expired","message":"forgotten","ref":\#(sent["ref"] as? Int ?? 0),"seq":1}"#])
        #expect(try await outcome == .clientExpired("forgotten"))
        #expect(await eventually { transport.connectionCount == 2 && !transport.sent(on: 1).isEmpty })
        #expect(object(transport.sent(on: 1)[0])["client"] == nil)
        await client.close()
    }
}
