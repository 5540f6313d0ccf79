import Stillwater
import StillwaterLive

/// A poll: one question, its options, and each voter's current choice.
public struct Poll: Codable, Sendable, Equatable {
    /// One answer voters can choose.
    public struct Option: Codable, Sendable, Equatable {
        /// `o1`, `o2`, … in the order the poll was created with; what a vote names.
        public var id: String
        /// What voters read.
        public var title: String
    }

    /// What the poll asks.
    public var question: String
    /// The answers, in the order shown.
    public var options: [Option]
    /// Each voter's choice (voter id → option id); a voter who votes again changes their choice.
    public var choices: [String: String] = [:]

    /// A new poll; options get ids `o1`, `o2`, … in the order given.
    public init(question: String, options: [String]) {
        self.question = question
        self.options = options.enumerated().map { Option(id: "o\($0.offset + 1)", title: $0.element) }
    }
}

/// The one action: a voter's choice, recorded in the log.
public struct Vote: Action, Codable, Sendable, Equatable {
    /// Who voted (their voter id) and for which option id.
    public var voter: String, option: String

    /// A vote of `voter` for `option`.
    public init(voter: String, option: String) {
        self.voter = voter
        self.option = option
    }

    /// Records the voter's choice, replacing an earlier one; an option the poll lacks changes nothing.
    public func reduce(_ state: inout Poll) {
        // Decided against the newest state, so an unknown option never gets here; kept safe for replays.
        guard state.options.contains(where: { $0.id == option }) else { return }
        state.choices[voter] = option
    }
}

/// What every browser sees, read-only: the question and a running tally.
public struct PollView: LiveView {
    /// One option with its count of votes; rows are matched by `id` when the list is patched.
    public struct Tally: Codable, Equatable, Sendable, Diffable {
        public var id: String, title: String, votes: Int
        public var diffIdentifier: String { id }
    }

    /// The question, each option's tally in the poll's order, and how many voters voted.
    public var question: String, tallies: [Tally], voters: Int

    /// The question and voter count sent whole when changed, the tallies as list patches.
    public static let liveFields: [LiveField<PollView>] = [
        .value("question", \.question), .list("tallies", \.tallies), .value("voters", \.voters),
    ]
}

/// The poll served live: anyone with the poll's secret may watch and vote, once per voter id.
public struct PollService: LiveService {
    /// What a client sends: `{"vote":"o2"}`.
    public struct Command: Codable, Sendable {
        /// The option id voted for.
        public var vote: String
        /// A vote for `vote`.
        public init(vote: String) { self.vote = vote }
    }

    /// Whether a hello's token is the poll's secret.
    let check: @Sendable (String) -> Bool

    /// - Parameter check: Whether a hello's token is the poll's secret.
    public init(check: @escaping @Sendable (String) -> Bool) {
        self.check = check
    }

    /// Counts the votes: O(voters + options).
    public func view(of poll: Poll) -> PollView {
        var counts: [String: Int] = [:]
        for option in poll.choices.values { counts[option, default: 0] += 1 }
        return PollView(
            question: poll.question,
            tallies: poll.options.map { PollView.Tally(id: $0.id, title: $0.title, votes: counts[$0.id] ?? 0) },
            voters: poll.choices.count)
    }

    /// Accepts a vote for an option the poll has, as the connection's voter; refuses any other.
    public func decide(_ command: Command, state: Poll, identity: String) -> LiveDecision<Vote> {
        guard state.options.contains(where: { $0.id == command.vote }) else {
            return .reject("no option \"\(command.vote)\" in this poll")
        }
        return .accept(Vote(voter: identity, option: command.vote))
    }

    /// Admits a client whose token is the secret and whose hello names a `voter` id (1 to 64 letters,
    /// digits, `-` or `_`; a page makes one up and keeps it).
    public func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> {
        guard let token = handshake.token, check(token) else { return .refused("wrong or missing token") }
        guard let voter = handshake.params["voter"], (1...64).contains(voter.count),
              voter.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return .refused("the hello's params need a voter id (1 to 64 of a-z, 0-9, - and _)") }
        return .accepted(voter)
    }
}
