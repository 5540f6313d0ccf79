import Stillwater

/// One line of a team's todo list, as clients see it.
public struct BoardItem: Codable, Equatable, Hashable, Sendable, Identifiable, Diffable {
    /// Stable identifier, chosen by the server (`"i1"`, `"i2"`, …); the key of the list diff.
    public var id: String
    /// What to do.
    public var text: String
    /// Whether it is done.
    public var done: Bool
    /// The name of the member who added it (nil for the first items of a board, and always nil in a
    /// viewer's view: viewers are not shown it).
    public var addedBy: String?

    /// Creates an item.
    public init(id: String, text: String, done: Bool = false, addedBy: String? = nil) {
        self.id = id
        self.text = text
        self.done = done
        self.addedBy = addedBy
    }
}

/// A team's board: the state held by the team's hub's `Store`, and what its journal's snapshots hold
/// (inside the library's `LiveLogState`, which adds the version, the stream and the recent command ids).
public struct Board: Codable, Equatable, Sendable {
    /// The board's title.
    public var title: String
    /// The items, in order.
    public var items: [BoardItem]
    /// The number part of the next item's identifier (server-only: never sent).
    public var nextItemNumber: Int = 1

    /// Creates a board with its first items (identifiers `i1`, `i2`, … are given here).
    public init(title: String, texts: [String] = []) {
        self.title = title
        items = texts.enumerated().map { BoardItem(id: "i\($0.offset + 1)", text: $0.element) }
        nextItemNumber = texts.count + 1
    }
}
