import Foundation

/// The bytes of a todo file, and what any bytes are: the one place that reads and writes the format.
///
/// The format (pretty-printed, keys sorted; fields the program does not know are kept):
/// ```json
/// { "format" : "stillwater-todo", "version" : 1, "nextID" : 3,
///   "items" : [ { "done" : false, "id" : 1, "title" : "milk" } ] }
/// ```
///
/// ```swift
/// import Foundation
///
/// let bytes = TodoFormat.encode(TodoList(titles: ["milk"]))
/// print(TodoFormat.parse(bytes) == .list(TodoList(titles: ["milk"])))
/// print(TodoFormat.parse(Data("[]".utf8)))
/// // Prints "true"
/// // Prints "notATodoList(\"a JSON array\")"
/// ```
public enum TodoFormat {
    /// The value of `"format"` that marks a file as this program's list.
    public static let marker = "stillwater-todo"
    /// The format version written; files of a later version are refused, not set aside.
    public static let version = 1

    /// What some bytes hold, as far as a todo list goes. Every input has exactly one answer; none traps.
    public enum Contents: Equatable, Sendable {
        /// Nothing but whitespace: nothing to lose, read as an empty list.
        case empty
        /// A todo list (titles cleaned as typed ones are, `nextID` raised past the largest identity).
        case list(TodoList)
        /// Not this program's list (no `"format": "stillwater-todo"`): what was found instead, in words.
        /// Such a file is never changed.
        case notATodoList(String)
        /// Marked as this program's list, but broken: why, and where.
        case damaged(String)
        /// Written by a later version of the program.
        case newerVersion(Int)
        /// A list with an identity (or `nextID`) outside ``TodoList/identities``: which, in words.
        case badIdentity(String)
    }

    /// The file's bytes for `list`: its fields, then the list's ``TodoList/otherFields`` and each item's
    /// ``TodoItem/otherFields`` beside the program's own.
    public static func encode(_ list: TodoList) -> Data {
        var fragments: [TodoItem: [UInt8]] = [:]
        return encode(list, reusing: &fragments)
    }

    /// The file's bytes for `list`, taking each item's text from `fragments` when an equal item was
    /// written before; on return `fragments` holds exactly the text of `list`'s items. A program that
    /// saves again and again keeps one such table, so a save writes only the items that changed.
    ///
    /// - Complexity: O(n) lookups for n items, plus the text of the items not in `fragments`.
    static func encode(_ list: TodoList, reusing fragments: inout [TodoItem: [UInt8]]) -> Data {
        var document = list.otherFields
        document["format"] = .string(marker)
        document["version"] = .integer(version)
        document["nextID"] = .integer(list.nextID)
        document["items"] = .array([])
        var used: [TodoItem: [UInt8]] = [:]
        used.reserveCapacity(list.items.count)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + 64 * list.items.count)
        bytes += "{\n".utf8
        let keys = document.keys.sorted()
        for (index, key) in keys.enumerated() {
            bytes += "  ".utf8
            JSONValue.string(key).write(to: &bytes, indent: 2)
            bytes += " : ".utf8
            if key == "items", !list.items.isEmpty {
                bytes += "[\n".utf8
                for (position, item) in list.items.enumerated() {
                    let text = used[item] ?? fragments[item] ?? fragment(of: item)
                    used[item] = text
                    bytes += text
                    bytes += (position == list.items.count - 1 ? "\n" : ",\n").utf8
                }
                bytes += "  ]".utf8
            } else {
                document[key]!.write(to: &bytes, indent: 2)
            }
            bytes += (index == keys.count - 1 ? "\n" : ",\n").utf8
        }
        bytes += "}\n".utf8
        fragments = used
        return Data(bytes)
    }

    /// One item's text in the file, indented as an element of `"items"`.
    private static func fragment(of item: TodoItem) -> [UInt8] {
        var fields = item.otherFields
        fields["id"] = .integer(item.id)
        fields["title"] = .string(item.title)
        fields["done"] = .bool(item.isDone)
        var bytes = Array(repeating: UInt8(ascii: " "), count: 4)
        JSONValue.object(fields).write(to: &bytes, indent: 4)
        return bytes
    }

    /// What `data` holds.
    ///
    /// - Complexity: O(n) in the size of `data`.
    public static func parse(_ data: Data) -> Contents {
        if data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) { return .empty }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            return looksMarked(data) ? .damaged("not valid JSON: \(jsonProblem(data))") : .notATodoList("text that is not JSON")
        }
        guard case .object(var document) = value else { return .notATodoList(value.kind) }
        switch document.removeValue(forKey: "format") {
        case .string(marker)?: break
        case .string(let other)?: return .notATodoList("a JSON object of the format \"\(other)\"")
        default: return .notATodoList("a JSON object without \"format\": \"\(marker)\"")
        }
        guard case .integer(let fileVersion)? = document.removeValue(forKey: "version") else {
            return .damaged("\"version\" is missing or not a whole number")
        }
        if fileVersion > version { return .newerVersion(fileVersion) }
        if fileVersion < 1 { return .damaged("unknown format version \(fileVersion)") }
        return readList(document)
    }

    /// The list in a document whose format and version were checked (and removed from it).
    private static func readList(_ document: [String: JSONValue]) -> Contents {
        var document = document
        guard case .array(let values)? = document.removeValue(forKey: "items") else {
            return .damaged("\"items\" is missing or not an array")
        }
        var items: [TodoItem] = []
        var seen = Set<Int>()
        for (index, value) in values.enumerated() {
            let place = "item \(index + 1) of \(values.count)"
            guard case .object(var fields) = value else { return .damaged("\(place) is \(value.kind), not an object") }
            let id: Int
            switch fields.removeValue(forKey: "id") {
            case .integer(let value)? where TodoList.identities.contains(value): id = value
            case .integer(let value)?: return .badIdentity("\(place) has the identity \(value); \(identityRule)")
            case .number(let value)?: return .badIdentity("\(place) has the identity \(value); \(identityRule)")
            case let other?: return .damaged("\(place) has \(other.kind) as its \"id\", not a number")
            case nil: return .damaged("\(place) has no \"id\"")
            }
            guard case .string(let title)? = fields.removeValue(forKey: "title") else {
                return .damaged("\(place) has no \"title\" string")
            }
            guard case .bool(let isDone)? = fields.removeValue(forKey: "done") else {
                return .damaged("\(place) has no \"done\" true or false")
            }
            guard seen.insert(id).inserted else { return .damaged("two items have the identity \(id)") }
            let cleaned = TodoItem.cleanTitle(title)
            items.append(TodoItem(id: id, title: cleaned.isEmpty ? "(untitled)" : cleaned, isDone: isDone, otherFields: fields))
        }
        var nextID: Int?
        switch document.removeValue(forKey: "nextID") {
        case nil, .null?: break
        case .integer(let value)? where (1...TodoList.identities.upperBound + 1).contains(value): nextID = value
        case let other?: return .badIdentity("\"nextID\" is \(other); it must be a whole number from 1 to \(TodoList.identities.upperBound + 1)")
        }
        return .list(TodoList(items: items, nextID: nextID, otherFields: document))
    }

    private static let identityRule =
        "identities must be whole numbers from 1 to \(TodoList.identities.upperBound)"

    /// Whether `data`, which the JSON reader refused, still looks like this program's list: it opens
    /// with `{` and carries the format marker in its first 4 KiB (a list cut short or mangled by hand).
    /// Such a file is set aside rather than refused; other text that merely mentions the marker (a
    /// source file, say) does not open with `{` and is refused, untouched.
    private static func looksMarked(_ data: Data) -> Bool {
        let head = String(decoding: data.prefix(4096), as: UTF8.self)
        guard head.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" }).first == "{" else { return false }
        return head.range(of: #""format"\s*:\s*"stillwater-todo""#, options: .regularExpression) != nil
    }

    /// What is wrong with `data` as JSON, in one line (`Number 1e400 is not representable in Swift.`).
    private static func jsonProblem(_ data: Data) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return "it could not be read"
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            return detail?.split(separator: "\n").first.map(String.init) ?? "it could not be read"
        }
    }
}

extension TodoFormat {
    /// Checks the format's promises on `data`, for the fuzz target and the corpus test: ``parse(_:)``
    /// answers without trapping; a list it reads is written and read back unchanged (identities in
    /// range, unknown fields kept); and two programs each adding an item to that list merge into one
    /// list with both items, no identity twice, that reads back as itself.
    ///
    /// ```swift
    /// print(TodoFormat.brokenPromise(in: TodoFormat.encode(TodoList(titles: ["milk"]))) ?? "kept")
    /// // Prints "kept"
    /// ```
    ///
    /// - Returns: `nil` when every promise holds; otherwise which one broke, in words.
    public static func brokenPromise(in data: Data) -> String? {
        guard case .list(let list) = parse(data) else { return nil }
        if let item = list.items.first(where: { !TodoList.identities.contains($0.id) }) {
            return "item \(item.id) was read with an identity out of range"
        }
        if list.nextID > TodoList.identities.upperBound + 1 { return "nextID \(list.nextID) was read out of range" }
        let again = parse(encode(list))
        guard again == .list(list) else { return "the list read back as \(again), not as itself" }
        // Two programs that each add an item to this list: the merge keeps both, under distinct
        // identities that a later load accepts.
        var ours = list, theirs = list
        TodoAction.add("ours").reduce(&ours)
        TodoAction.add("theirs").reduce(&theirs)
        let merged = TodoMerge(base: list, ours: ours, theirs: theirs).list
        let ids = merged.items.map(\.id)
        if merged.items.count != list.items.count + 2 { return "a merge of two adds lost an item" }
        if Set(ids).count != ids.count { return "a merge of two adds used an identity twice" }
        if parse(encode(merged)) != .list(merged) { return "a merged list does not read back as itself" }
        return nil
    }
}
