import Stillwater

/// What a ``LiveHub``'s log holds as its state: the app's state, with the log version it reflects, the
/// identity of the stream, and what the log remembers of its clients' commands.
///
/// The hub writes its snapshots as this type, and the log's entries are ``LiveEntry`` values whose
/// `reduce` keeps it up to date, so replaying a log (`ActionLogContents.replayed(onto:)`) gives back the
/// state and the remembered commands alike: a command retried after a restart is answered, never
/// applied twice.
public struct LiveLogState<State: Codable & Sendable>: Codable, Sendable {
    /// The app's state.
    public var state: State
    /// The log version this state reflects: the version of the last entry reduced onto it.
    public var version: Int
    /// The stream's identity, chosen at random when the log was made and kept in its snapshots. A client
    /// that resumes from a version of another stream (another log) is sent a snapshot.
    public var stream: String
    /// The `cid`s of the latest recorded commands that carried one, each with the version its entry
    /// made (the last ``RecentCommandIDs/capacity`` of them).
    public var recentCommands: RecentCommandIDs
    /// Per client that numbers its commands: the highest number recorded and its version, and the
    /// log's clock.
    public var clients: LiveClientTable

    /// Creates the log state of a new stream.
    ///
    /// - Parameters:
    ///   - state: The app's state.
    ///   - version: The log version it reflects (0 for a new log).
    ///   - stream: The stream's identity; a new random one unless given.
    ///   - recentCommands: The remembered `cid`s.
    ///   - clients: The remembered clients.
    public init(state: State, version: Int = 0, stream: String = LiveLogState.newStream(),
                recentCommands: RecentCommandIDs = RecentCommandIDs(), clients: LiveClientTable = LiveClientTable()) {
        self.state = state
        self.version = version
        self.stream = stream
        self.recentCommands = recentCommands
        self.clients = clients
    }

    /// A new random stream identity: `s-` and 16 hexadecimal digits.
    public static func newStream() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = String(generator.next() as UInt64, radix: 16)
        return "s-" + String(repeating: "0", count: 16 - digits.count) + digits
    }

    private enum CodingKeys: String, CodingKey {
        case state, version, stream, recentCommands, clients
    }

    /// Decodes a log state; a snapshot written before clients were numbered has no `clients`, and
    /// gets an empty table.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decode(State.self, forKey: .state)
        version = try container.decode(Int.self, forKey: .version)
        stream = try container.decode(String.self, forKey: .stream)
        recentCommands = try container.decode(RecentCommandIDs.self, forKey: .recentCommands)
        clients = try container.decodeIfPresent(LiveClientTable.self, forKey: .clients) ?? LiveClientTable()
    }

    /// Encodes every member.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(version, forKey: .version)
        try container.encode(stream, forKey: .stream)
        try container.encode(recentCommands, forKey: .recentCommands)
        try container.encode(clients, forKey: .clients)
    }
}

/// One entry of a ``LiveHub``'s log: what one command became, with what identifies the command.
///
/// An entry holds the action an accepted command became; or, for a command its client numbered
/// (``client`` and ``seq``) that the service refused, no action and the ``refusal``: the number is
/// used, and the command is decided once, whatever it was decided.
///
/// Reducing an entry onto a ``LiveLogState`` moves its version on by one and the clients' clock to
/// the entry's ``time``; it applies the action unless the command was recorded before (its client's
/// number is not above the highest recorded, or its `cid` is remembered), and remembers it. So every
/// replica of a log that reduces the same entries in the same order has the same state, duplicates
/// skipped alike.
public struct LiveEntry<LiveAction: Action & Codable & Sendable>: Action, Codable, Sendable
where LiveAction.State: Codable & Sendable {
    /// The client's id for the command (`cid`), if it gave one.
    public var cid: String?
    /// The action the command became; nil for a numbered command the service refused.
    public var action: LiveAction?
    /// The client that numbered the command, if it did.
    public var client: LiveClientID?
    /// The client's number for the command (with ``client``).
    public var seq: Int?
    /// When the command was decided (milliseconds since 1970, the deciding server's clock), if known.
    public var time: Int64?
    /// Why the service refused the command (only with ``client`` and no action).
    public var refusal: String?

    /// Creates the entry of an accepted command.
    public init(cid: String? = nil, action: LiveAction) {
        self.cid = cid
        self.action = action
    }

    /// Creates the entry of a numbered command: accepted as `action`, or refused with `refusal`.
    ///
    /// - Parameters:
    ///   - client: The client that numbered it.
    ///   - seq: Its number, at least 1.
    ///   - time: When it was decided (milliseconds since 1970).
    ///   - action: What it became, or nil when refused.
    ///   - refusal: Why it was refused.
    ///   - cid: Its `cid`, if it also had one.
    public init(client: LiveClientID, seq: Int, time: Int64, action: LiveAction?, refusal: String? = nil, cid: String? = nil) {
        precondition(seq >= 1, "LiveEntry(client:seq:): seq must be at least 1; got \(seq)")
        self.cid = cid
        self.action = action
        self.client = client
        self.seq = seq
        self.time = time
        self.refusal = action == nil ? refusal ?? "refused" : nil
    }

    /// Whether reducing this entry onto `state` applies it: false for a command recorded before.
    ///
    /// A numbered command is judged by its number alone (its `cid`, if any, is remembered as well); any
    /// other by its `cid`.
    public func isNew(in state: LiveLogState<LiveAction.State>) -> Bool {
        if let client, let seq {
            guard let record = state.clients[client] else { return true }
            return seq > record.seq
        }
        if let cid { return state.recentCommands[cid] == nil }
        return true
    }

    /// Moves `state` on by one version; applies the action unless the command was recorded before.
    public func reduce(_ state: inout LiveLogState<LiveAction.State>) {
        state.version += 1
        if let time { state.clients.advance(to: time) }
        guard isNew(in: state) else { return }
        if let client, let seq {
            state.clients.record(client, seq: seq, version: state.version, refusal: action == nil ? refusal : nil)
        }
        if let cid { state.recentCommands.record(cid, version: state.version) }
        action?.reduce(&state.state)
    }
}

/// The client ids of a log's latest recorded commands, each with the version its entry made: the last
/// ``capacity`` of them, the oldest forgotten first.
public struct RecentCommandIDs: Codable, Sendable, Equatable {
    /// How many ids are remembered. A command retried after this many newer ones is taken as new.
    public static let capacity = 10_000

    private var versions: [String: Int] = [:]
    /// The ids in the order they came, used as a ring once full: `next` is the oldest.
    private var order: [String] = []
    private var next = 0

    /// Creates an empty record.
    public init() {}

    /// The version recorded for `cid`, if it is remembered.
    public subscript(cid: String) -> Int? { versions[cid] }

    /// How many ids are remembered.
    public var count: Int { versions.count }

    /// Remembers that the command `cid` made `version`, forgetting the oldest id when full. An id
    /// remembered already keeps its first version.
    ///
    /// - Complexity: O(1) on average.
    public mutating func record(_ cid: String, version: Int) {
        guard versions[cid] == nil else { return }
        versions[cid] = version
        if order.count < Self.capacity {
            order.append(cid)
        } else {
            versions[order[next]] = nil
            order[next] = cid
            next = (next + 1) % Self.capacity
        }
    }
}

/// A batch of accepted actions dispatched to the hub's store as one action, so its observers hear of
/// the batch once.
struct LiveBatch<LiveAction: Action>: Action {
    var actions: [LiveAction]

    func reduce(_ state: inout LiveAction.State) {
        for action in actions { action.reduce(&state) }
    }
}

/// Sets the whole state: a replica that starts again from the log's snapshot.
struct LiveReset<State: Sendable>: Action {
    var state: State

    func reduce(_ current: inout State) { current = state }
}
