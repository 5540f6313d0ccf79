import Stillwater

/// What a ``LiveHub``'s log holds as its state: the app's state, with the log version it reflects, the
/// identity of the stream, and the client ids of the latest commands.
///
/// The hub writes its snapshots as this type, and the log's entries are ``LiveEntry`` values whose
/// `reduce` keeps it up to date, so replaying a log (`ActionLogContents.replayed(onto:)`) gives back the
/// state and the remembered client ids alike: a command retried after a restart is answered, never
/// applied twice.
public struct LiveLogState<State: Codable & Sendable>: Codable, Sendable {
    /// The app's state.
    public var state: State
    /// The log version this state reflects: the version of the last entry reduced onto it.
    public var version: Int
    /// The stream's identity, chosen at random when the log was made and kept in its snapshots. A client
    /// that resumes from a version of another stream (another log) is sent a snapshot.
    public var stream: String
    /// The client ids of the latest recorded commands, each with the version its entry made.
    public var recentCommands: RecentCommandIDs

    /// Creates the log state of a new stream.
    ///
    /// - Parameters:
    ///   - state: The app's state.
    ///   - version: The log version it reflects (0 for a new log).
    ///   - stream: The stream's identity; a new random one unless given.
    ///   - recentCommands: The remembered client ids.
    public init(state: State, version: Int = 0, stream: String = LiveLogState.newStream(),
                recentCommands: RecentCommandIDs = RecentCommandIDs()) {
        self.state = state
        self.version = version
        self.stream = stream
        self.recentCommands = recentCommands
    }

    /// A new random stream identity: `s-` and 16 hexadecimal digits.
    public static func newStream() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = String(generator.next() as UInt64, radix: 16)
        return "s-" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// One entry of a ``LiveHub``'s log: an action an accepted command became, with the client's id for
/// the command, if it gave one.
///
/// Reducing an entry onto a ``LiveLogState`` moves its version on by one and, unless the client id was
/// recorded before, applies the action and remembers the id with that version. So every replica of a
/// log that reduces the same entries in the same order has the same state, duplicates skipped alike.
public struct LiveEntry<LiveAction: Action & Codable & Sendable>: Action, Codable, Sendable
where LiveAction.State: Codable & Sendable {
    /// The client's id for the command, if it gave one.
    public var cid: String?
    /// The action the command became.
    public var action: LiveAction

    /// Creates an entry.
    public init(cid: String? = nil, action: LiveAction) {
        self.cid = cid
        self.action = action
    }

    /// Moves `state` on by one version; applies the action unless its `cid` was recorded before.
    public func reduce(_ state: inout LiveLogState<LiveAction.State>) {
        state.version += 1
        if let cid {
            guard state.recentCommands[cid] == nil else { return }
            state.recentCommands.record(cid, version: state.version)
        }
        action.reduce(&state.state)
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
