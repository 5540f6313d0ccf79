import Stillwater

/// One entry of the todo list: a title, done or not, and an identity that survives edits and moves.
///
/// The identity (``id``) is what the list diff and the row handles use, so a renamed or toggled item is
/// the same item (a redrawn row), never a deleted one and a new one.
///
/// ```swift
/// var milk = TodoItem(id: 1, title: "milk")
/// milk.isDone = true
/// print(milk.diffIdentifier, milk.isDone)
/// // Prints "1 true"
/// ```
public struct TodoItem: Hashable, Sendable, Identifiable, Diffable {
    /// The item's identity, unique within its list, in ``TodoList/identities``.
    public let id: Int
    /// What to do. Never empty and never holds control characters when made through ``TodoAction``.
    public var title: String
    /// Whether it is done.
    public var isDone: Bool
    /// Fields of the item in its file that this program does not know (another tool's `"priority"`,
    /// say), kept as they were read and written back on save.
    public var otherFields: [String: JSONValue]

    /// An item with these values, taken as they are (use ``TodoItem/cleanTitle(_:)`` for user input).
    public init(id: Int, title: String, isDone: Bool = false, otherFields: [String: JSONValue] = [:]) {
        self.id = id
        self.title = title
        self.isDone = isDone
        self.otherFields = otherFields
    }

    /// `text` as a title: control characters (newlines, tabs, escape codes) become spaces, and
    /// whitespace at both ends is removed. The result is empty when `text` had nothing printable.
    ///
    /// ```swift
    /// print(TodoItem.cleanTitle("  buy\tmilk\n"))
    /// // Prints "buy milk"
    /// ```
    public static func cleanTitle(_ text: some StringProtocol) -> String {
        let printable = text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control ? " " : Character(scalar)
        }
        return String(printable).trimmingWhitespace()
    }
}

/// The whole todo list: the store's state, and what the JSON file holds.
///
/// Items keep the order the user gave them. ``nextID`` is the identity the next added item gets; it only
/// grows, so an identity is not reused within a file, even after deletes, until the last identity of
/// ``identities`` has been handed out (see ``allocateID()``).
public struct TodoList: Equatable, Sendable {
    /// The identities an item may have: from 1 to 2^53 − 1, the largest whole number every JSON reader
    /// (JavaScript's included) reads exactly. A file with any other identity is refused on load.
    public static let identities: ClosedRange<Int> = 1...9_007_199_254_740_991

    /// The items, in the user's order.
    public var items: [TodoItem]
    /// The identity the next added item gets; more than every identity in ``items``, and at most one more
    /// than the last of ``identities`` (then ``allocateID()`` reuses a free identity).
    public var nextID: Int
    /// Top-level fields of the file that this program does not know (an `"owner"`, say), kept as they
    /// were read and written back on save.
    public var otherFields: [String: JSONValue]

    /// A list of `items`; `nextID` defaults to one more than the largest identity (or 1), and is raised
    /// to that when smaller. It never passes one more than the last of ``identities``, however large the
    /// items' identities are.
    public init(items: [TodoItem] = [], nextID: Int? = nil, otherFields: [String: JSONValue] = [:]) {
        self.items = items
        let largest = min(items.map(\.id).max() ?? 0, Self.identities.upperBound)
        self.nextID = min(max(nextID ?? (largest + 1), largest + 1), Self.identities.upperBound + 1)
        self.otherFields = otherFields
    }

    /// Hands out the identity for a new item: ``nextID``, which then grows by one. Once every identity up
    /// to the last of ``identities`` has been handed out, the smallest identity no item has is reused
    /// instead, so allocation never overflows and never fails.
    ///
    /// ```swift
    /// var list = TodoList(titles: ["milk"])
    /// print(list.allocateID(), list.nextID)
    /// // Prints "2 3"
    /// ```
    ///
    /// - Complexity: O(1) until the identities run out; O(n) for n items after that.
    public mutating func allocateID() -> Int {
        if nextID <= Self.identities.upperBound {
            defer { nextID += 1 }
            return nextID
        }
        let used = Set(items.map(\.id))
        // Fewer items than identities can exist in memory, so a free identity is always found.
        return Self.identities.first { !used.contains($0) }!
    }

    /// A list of new, not-done items with these titles, numbered from 1: handy in tests and examples.
    ///
    /// ```swift
    /// print(TodoList(titles: ["milk", "eggs"]).items.map(\.id))
    /// // Prints "[1, 2]"
    /// ```
    public init(titles: [String]) {
        self.init(items: titles.enumerated().map { TodoItem(id: $0.offset + 1, title: $0.element) })
    }

    /// The number of items not done yet.
    public var remaining: Int {
        items.count { !$0.isDone }
    }

    /// The items `filter` shows, in order.
    ///
    /// - Complexity: O(n).
    public func items(shownBy filter: TodoFilter) -> [TodoItem] {
        filter.apply(to: items)
    }

    /// The position of the item with identity `id` in ``items``, or `nil` when there is none.
    public func index(of id: Int) -> Int? {
        items.firstIndex { $0.id == id }
    }
}

/// Which items the list shows.
public enum TodoFilter: String, CaseIterable, Codable, Sendable {
    /// Every item.
    case all
    /// The items not done yet.
    case active
    /// The done items.
    case done

    /// The items of `items` this filter shows, in order.
    ///
    /// - Complexity: O(n); none for ``all``.
    public func apply(to items: [TodoItem]) -> [TodoItem] {
        self == .all ? items : items.filter(shows)
    }

    /// Whether this filter shows `item`.
    public func shows(_ item: TodoItem) -> Bool {
        switch self {
        case .all: true
        case .active: !item.isDone
        case .done: item.isDone
        }
    }

    /// The filter after this one, in the order all, active, done, and back to all (the `f` key).
    public var next: TodoFilter {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}

/// Which way an item moves in the list.
public enum MoveDirection: String, CaseIterable, Codable, Sendable {
    /// Towards the top (a smaller number).
    case up
    /// Towards the bottom (a larger number).
    case down
}

extension StringProtocol {
    /// The text without whitespace at either end.
    func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
