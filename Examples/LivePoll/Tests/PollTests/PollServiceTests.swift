import PollCore
import Stillwater
import StillwaterLive
import Testing

@Suite("The poll as a live service, without a network")
struct PollServiceTests {
    static let secret = "a-poll-secret-0123456789"

    func openHub(_ log: MemoryJournal<LiveLogState<Poll>, LiveEntry<Vote>> = MemoryJournal()) async throws -> LiveHub<PollService> {
        try await LiveHub.open(
            PollService(check: { $0 == Self.secret }), log: log,
            initial: Poll(question: "Lunch?", options: ["Soup", "Salad", "Noodles"]))
    }

    @Test("votes are tallied per option, and a voter who votes again moves their vote")
    func tally() async throws {
        let hub = try await openHub()
        #expect(await hub.perform(.init(vote: "o1"), as: "ann") == .applied(version: 1))
        #expect(await hub.perform(.init(vote: "o1"), as: "bob") == .applied(version: 2))
        #expect(await hub.perform(.init(vote: "o3"), as: "ann") == .applied(version: 3))
        await hub.settle()
        #expect(hub.view.tallies.map(\.votes) == [1, 0, 1])
        #expect(hub.view.tallies.map(\.title) == ["Soup", "Salad", "Noodles"])
        #expect(hub.view.voters == 2)
    }

    @Test("an option the poll does not have is refused and changes nothing")
    func unknownOption() async throws {
        let hub = try await openHub()
        #expect(await hub.perform(.init(vote: "o9"), as: "ann") == .rejected(#"no option "o9" in this poll"#))
        await hub.settle()
        #expect(hub.version == 0)
        #expect(hub.view.voters == 0)
    }

    @Test("a vote sent twice with one client id is counted once")
    func duplicate() async throws {
        let hub = try await openHub()
        #expect(await hub.perform(.init(vote: "o2"), cid: "c-1", as: "ann") == .applied(version: 1))
        #expect(await hub.perform(.init(vote: "o1"), cid: "c-1", as: "ann") == .duplicate(version: 1))
        await hub.settle()
        #expect(hub.view.tallies.map(\.votes) == [0, 1, 0])
    }

    @Test("the votes survive a restart on the same log")
    func restart() async throws {
        let log = MemoryJournal<LiveLogState<Poll>, LiveEntry<Vote>>()
        let first = try await openHub(log)
        _ = await first.perform(.init(vote: "o2"), as: "ann")
        _ = await first.perform(.init(vote: "o2"), as: "bob")
        await first.close()
        let second = try await openHub(log)
        #expect(second.view.tallies.map(\.votes) == [0, 2, 0])
        #expect(second.version == 2)
    }

    @Test("a client is admitted only with the secret and a voter id")
    func admission() async throws {
        let service = PollService(check: { $0 == Self.secret })
        func identity(_ token: String?, _ voter: String?) async -> String? {
            let handshake = LiveHandshake(token: token, params: voter.map { ["voter": $0] } ?? [:])
            if case .accepted(let identity) = await service.authenticate(handshake) { return identity }
            return nil
        }
        #expect(await identity(Self.secret, "v-123") == "v-123")
        #expect(await identity("wrong", "v-123") == nil)
        #expect(await identity(nil, "v-123") == nil)
        #expect(await identity(Self.secret, nil) == nil)
        #expect(await identity(Self.secret, "") == nil)
        #expect(await identity(Self.secret, "has space") == nil)
        #expect(await identity(Self.secret, String(repeating: "v", count: 65)) == nil)
    }
}
