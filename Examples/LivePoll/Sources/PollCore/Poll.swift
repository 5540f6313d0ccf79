import Stillwater
import StillwaterLive

/// A poll: one question, its options, and each voter's current choice.
///
/// The log keeps the question, the options and the choices; the count of votes per option is kept beside
/// them (not stored: rebuilt from the choices when a snapshot is read), so that each voter's view costs
/// O(options), not O(voters).
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
    public private(set) var choices: [String: String] = [:]
    /// How many voters chose each option (option id → count), kept with ``choices``.
    public private(set) var counts: [String: Int] = [:]

    /// A new poll; options get ids `o1`, `o2`, … in the order given.
    public init(question: String, options: [String]) {
        self.question = question
        self.options = options.enumerated().map { Option(id: "o\($0.offset + 1)", title: $0.element) }
    }

    /// Records `voter`'s choice of `option`, replacing an earlier one, and moves the counts.
    public mutating func choose(_ option: String, by voter: String) {
        if let earlier = choices.updateValue(option, forKey: voter) {
            counts[earlier, default: 0] -= 1
            if counts[earlier] == 0 { counts[earlier] = nil }  // so that equal choices make equal polls
        }
        counts[option, default: 0] += 1
    }

    private enum CodingKeys: String, CodingKey {
        case question, options, choices
    }

    /// Reads a poll as the log stored it, and counts its choices.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        question = try container.decode(String.self, forKey: .question)
        options = try container.decode([Option].self, forKey: .options)
        choices = try container.decodeIfPresent([String: String].self, forKey: .choices) ?? [:]
        for option in choices.values { counts[option, default: 0] += 1 }
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
        state.choose(option, by: voter)
    }
}

/// What a voter's browser sees, read-only: the question, a running tally, and the voter's own vote.
public struct PollView: LiveView {
    /// One option with its count of votes; rows are matched by `id` when the list is patched.
    public struct Tally: Codable, Equatable, Sendable, Diffable {
        public var id: String, title: String, votes: Int
        public var diffIdentifier: String { id }
    }

    /// The question, each option's tally in the poll's order, and how many voters voted.
    public var question: String, tallies: [Tally], voters: Int
    /// The option id this voter chose, nil before they voted: each voter is shown their own vote only.
    public var yourVote: String?

    /// The question, voter count and own vote sent whole when changed, the tallies as list patches.
    public static let liveFields: [LiveField<PollView>] = [
        .value("question", \.question), .list("tallies", \.tallies), .value("voters", \.voters),
        .value("yourVote", \.yourVote),
    ]
}

/// The poll served live: anyone with the poll's secret may watch and vote, once per voter id; each voter
/// is an audience of their own, shown the tally and their own vote (never another voter's).
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

    /// Each voter is an audience: the hub makes one view per connected voter and version.
    public func audience(of voter: String) -> String { voter }

    /// The tally and `voter`'s own vote: O(options).
    public func view(of poll: Poll, for voter: String) -> PollView {
        PollView(
            question: poll.question,
            tallies: poll.options.map { PollView.Tally(id: $0.id, title: $0.title, votes: poll.counts[$0.id] ?? 0) },
            voters: poll.choices.count, yourVote: poll.choices[voter])
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
