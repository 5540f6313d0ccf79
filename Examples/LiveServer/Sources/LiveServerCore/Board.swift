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

/// A team's board: the state held by the team's `Store`.
public struct Board: Equatable, Sendable {
    /// The board's title.
    public var title: String
    /// The items, in order.
    public var items: [BoardItem]
    /// Grows by one with every action that changed something a client sees.
    public var version: Int = 0
    /// The number part of the next item's identifier (server-only: never sent).
    public var nextItemNumber: Int = 1
    /// How many actions were rejected by the reducer (server-only: never sent).
    public var rejectedCount: Int = 0

    /// Creates a board with its first items (identifiers `i1`, `i2`, … are given here).
    public init(title: String, texts: [String] = []) {
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
}
