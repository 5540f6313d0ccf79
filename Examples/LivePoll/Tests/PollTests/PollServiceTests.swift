import PollCore
import Stillwater
import StillwaterLive
import Foundation
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
        #expect(hub.view(for: "ann").tallies.map(\.votes) == [1, 0, 1])
        #expect(hub.view(for: "ann").tallies.map(\.title) == ["Soup", "Salad", "Noodles"])
        #expect(hub.view(for: "ann").voters == 2)
        #expect(hub.view(for: "ann").yourVote == "o3")
        #expect(hub.view(for: "bob").yourVote == "o1")
        #expect(hub.view(for: "bob").tallies == hub.view(for: "ann").tallies)
    }

    @Test("an option the poll does not have is refused and changes nothing")
    func unknownOption() async throws {
        let hub = try await openHub()
        #expect(await hub.perform(.init(vote: "o9"), as: "ann") == .rejected(#"no option "o9" in this poll"#))
        await hub.settle()
        #expect(hub.version == 0)
        #expect(hub.view(for: "ann").voters == 0)
        #expect(hub.view(for: "ann").yourVote == nil)
    }

    @Test("a vote sent twice with one client id is counted once")
    func duplicate() async throws {
        let hub = try await openHub()
        #expect(await hub.perform(.init(vote: "o2"), cid: "c-1", as: "ann") == .applied(version: 1))
        #expect(await hub.perform(.init(vote: "o1"), cid: "c-1", as: "ann") == .duplicate(version: 1))
        await hub.settle()
        #expect(hub.view(for: "ann").tallies.map(\.votes) == [0, 1, 0])
    }

    @Test("the votes survive a restart on the same log")
    func restart() async throws {
        let log = MemoryJournal<LiveLogState<Poll>, LiveEntry<Vote>>()
        let first = try await openHub(log)
        _ = await first.perform(.init(vote: "o2"), as: "ann")
        _ = await first.perform(.init(vote: "o2"), as: "bob")
        await first.close()
        let second = try await openHub(log)
        #expect(second.view(for: "carol").tallies.map(\.votes) == [0, 2, 0])
        #expect(second.view(for: "ann").yourVote == "o2")
        #expect(second.view(for: "carol").yourVote == nil)
        #expect(second.version == 2)
    }

    @Test("each voter is shown the tally and their own vote, never another's (Swift clients, in process)", .timeLimit(.minutes(1)))
    func ownVote() async throws {
        let hub = try await openHub()
        let ticking = Task { await hub.run() }
        defer { ticking.cancel() }
        func voter(_ id: String) -> LiveClient<PollView, PollService.Command> {
            LiveClient(transport: LiveInProcessTransport(hub: hub), token: Self.secret, params: ["voter": id])
        }
        let ann = voter("ann"), bob = voter("bob"), cat = voter("cat")
        #expect(try await ann.send(.init(vote: "o2")) == .applied(version: 1))
        #expect(try await bob.send(.init(vote: "o3")) == .applied(version: 2))
        let counted: (PollView?) -> Bool = { $0?.tallies.map(\.votes) == [0, 1, 1] }
        let annSees = try #require(try await ann.view.firstValue(where: counted) ?? nil)
        let bobSees = try #require(try await bob.view.firstValue(where: counted) ?? nil)
        let catSees = try #require(try await cat.view.firstValue(where: counted) ?? nil)
        #expect(annSees.yourVote == "o2")
        #expect(bobSees.yourVote == "o3")
        #expect(catSees.yourVote == nil)
        #expect(annSees.voters == 2 && bobSees.voters == 2 && catSees.voters == 2)
        // Ann changes her vote: her view follows, Bob's own vote stays his.
        #expect(try await ann.send(.init(vote: "o3")) == .applied(version: 3))
        let annAfter = try #require(try await ann.view.firstValue(where: { $0?.tallies.map(\.votes) == [0, 0, 2] }) ?? nil)
        let bobAfter = try #require(try await bob.view.firstValue(where: { $0?.tallies.map(\.votes) == [0, 0, 2] }) ?? nil)
        #expect(annAfter.yourVote == "o3")
        #expect(bobAfter.yourVote == "o3")
        #expect(cat.view.value?.yourVote == nil)
        await ann.close()
        await bob.close()
        await cat.close()
    }

    @Test("the counts kept beside the choices equal a count of the choices, after votes, changes and a reload")
    func countsFollowChoices() throws {
        var poll = Poll(question: "Q", options: ["a", "b", "c"])
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            Vote(voter: "v\(Int.random(in: 0..<20, using: &random))", option: "o\(Int.random(in: 0..<4, using: &random))").reduce(&poll)
        }
        var counted: [String: Int] = [:]
        for option in poll.choices.values { counted[option, default: 0] += 1 }
        #expect(poll.counts == counted)
        let reloaded = try JSONDecoder().decode(Poll.self, from: JSONEncoder().encode(poll))
        #expect(reloaded.choices == poll.choices)
        #expect(reloaded == poll)
        #expect(!String(decoding: try JSONEncoder().encode(poll), as: UTF8.self).contains("counts"))
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
