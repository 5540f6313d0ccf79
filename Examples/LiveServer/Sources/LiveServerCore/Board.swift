import Stillwater

/// One line of a team's todo list, as clients see it.
public struct BoardItem: Codable, Equatable, Hashable, Sendable, Identifiable, Diffable {
    /// Stable identifier, chosen by the server (`"i1"`, `"i2"`, …); the key of the list diff.
    public var id: String
    /// What to do.
    public var text: String
    /// Whether it is done.
    public var done: Bool

    /// Creates an item.
    public init(id: String, text: String, done: Bool = false) {
        self.id = id
        self.text = text
        self.done = done
    }
}

/// What a client is shown of a board: its version, title and items. Everything else the board holds
/// stays on the server.
public struct BoardView: Codable, Equatable, Sendable {
    /// The board's version when this view was taken; it grows by one with every visible change.
    public var version: Int
    /// The board's title.
    public var title: String
    /// The items, in order.
    public var items: [BoardItem]

    /// Creates a view.
    public init(version: Int, title: String, items: [BoardItem]) {
        self.version = version
        self.title = title
        self.items = items
    }
}

/// A team's board: the state held by the team's `Store`, and what its journal's snapshots hold.
public struct Board: Codable, Equatable, Sendable {
    /// The board's identity, chosen at random when the board is made and kept across restarts. A client
    /// resuming from a version of another board (a new data folder, say) is sent a snapshot instead.
    public var id: String
    /// The board's title.
    public var title: String
    /// The items, in order.
    public var items: [BoardItem]
    /// Grows by one with every action that changed something a client sees.
    public var version: Int = 0
    /// How many commands the board accepted: the journal's version (server-only: never sent).
    public var sequence: Int = 0
    /// The number part of the next item's identifier (server-only: never sent).
    public var nextItemNumber: Int = 1
    /// The client-chosen ids of the latest accepted commands and the version each made, so a retried
    /// command is answered instead of applied twice (server-only: never sent).
    public var recentCommands = RecentCommands()

    /// Creates a board with its first items (identifiers `i1`, `i2`, … are given here).
    ///
    /// - Parameter id: The board's identity; a new random one unless given.
    public init(title: String, texts: [String] = [], id: String = Board.newID()) {
        self.id = id
        self.title = title
        self.items = []
        for text in texts {
            items.append(BoardItem(id: "i\(nextItemNumber)", text: text))
            nextItemNumber += 1
        }
    }

    /// The part of the board clients are shown. The store's scope on this key path is shared by every
    /// connection of the team, so each change costs one read and one comparison, not one per client.
    public var view: BoardView { BoardView(version: version, title: title, items: items) }

    /// A new random board identity: `b-` and 16 hexadecimal digits.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let number = generator.next() as UInt64
        let digits = String(number, radix: 16)
        return "b-" + String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The client-chosen ids of a board's latest accepted commands, each with the version the board had
/// after it: the last ``capacity`` of them, older ones forgotten first.
public struct RecentCommands: Codable, Equatable, Sendable {
    /// How many ids are remembered. A command retried after this many newer commands were accepted is
    /// taken as new.
    public static let capacity = 10_000

    private var versions: [String: Int] = [:]
    /// The ids in the order they arrived, used as a ring: `next` is where the next id goes (the oldest
    /// id, once the ring is full).
    private var order: [String] = []
    private var next = 0

    /// Creates an empty record.
    public init() {}

    /// The version recorded for `id`, if it is remembered.
    public subscript(id: String) -> Int? { versions[id] }

    /// How many ids are remembered.
    public var count: Int { versions.count }

    /// Remembers that the command `id` made `version`, forgetting the oldest id when full.
    ///
    /// - Complexity: O(1) on average.
    public mutating func record(_ id: String, version: Int) {
        guard versions.updateValue(version, forKey: id) == nil else { return }
        if order.count < Self.capacity {
            order.append(id)
        } else {
            versions[order[next]] = nil
            order[next] = id
            next = (next + 1) % Self.capacity
        }
    }
}
