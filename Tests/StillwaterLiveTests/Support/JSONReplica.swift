import Foundation

/// A client's copy of a live view, kept the way the protocol article tells a client in any language to
/// keep it: plain JSON values, a snapshot replacing everything, a patch checked against the version and
/// applied member by member. It knows nothing of the server's Swift types.
struct JSONReplica {
    struct Mismatch: Error, CustomStringConvertible {
        var description: String
    }

    private(set) var stream: String?
    private(set) var version: Int?
    private(set) var view: [String: Any] = [:]
    private(set) var snapshots = 0
    private(set) var patches = 0

    /// Applies a snapshot or patch frame; other frames leave the replica as it is.
    mutating func apply(_ text: String) throws {
        let frame = object(text)
        switch frame["type"] as? String {
        case "snapshot":
            guard let stream = frame["stream"] as? String, let version = frame["version"] as? Int,
                  let view = frame["view"] as? [String: Any]
            else { throw Mismatch(description: "a snapshot without stream, version or view: \(text)") }
            (self.stream, self.version, self.view) = (stream, version, view)
            snapshots += 1
        case "patch":
            guard let from = frame["from"] as? Int, let to = frame["version"] as? Int else {
                throw Mismatch(description: "a patch without from or version: \(text)")
            }
            guard from == version else { throw Mismatch(description: "a patch from \(from) to a replica at \(version.map(String.init) ?? "nil")") }
            for (name, value) in frame["set"] as? [String: Any] ?? [:] { view[name] = value }
            for (name, patch) in frame["lists"] as? [String: Any] ?? [:] {
                guard let list = view[name] as? [Any], let patch = patch as? [String: Any] else {
                    throw Mismatch(description: "a list patch for \(name), which is not a list")
                }
                view[name] = try Self.applyListPatch(patch, to: list)
            }
            version = to
            patches += 1
        default:
            break
        }
    }

    /// The view decoded as `View`.
    func decoded<View: Decodable>(as type: View.Type) throws -> View {
        try JSONDecoder().decode(View.self, from: JSONSerialization.data(withJSONObject: view))
    }

    /// Applies a list patch as the article describes: walk the new list's indexes in order; an insert
    /// or a move target takes the next element of `elements`; any other index takes the next old element
    /// that was neither deleted nor moved away, replaced by the next element of `elements` when it is
    /// one of `updates`.
    static func applyListPatch(_ patch: [String: Any], to old: [Any]) throws -> [Any] {
        let changes = patch["changes"] as? [String: Any] ?? [:]
        func ints(_ name: String) -> [Int] { changes[name] as? [Int] ?? [] }
        let deletes = Set(ints("deletes")), inserts = Set(ints("inserts")), updates = Set(ints("updates"))
        let moves = (changes["moves"] as? [[Int]] ?? []).map { ($0[0], $0[1]) }
        let movedFrom = Set(moves.map(\.0)), movedTo = Set(moves.map(\.1))
        var elements = (patch["elements"] as? [Any] ?? [])[...]
        var staying = old.indices.filter { !deletes.contains($0) && !movedFrom.contains($0) }[...]
        let count = old.count - deletes.count + inserts.count
        var result: [Any] = []
        for index in 0..<count {
            if inserts.contains(index) || movedTo.contains(index) {
                guard let element = elements.popFirst() else { throw Mismatch(description: "too few elements") }
                result.append(element)
            } else {
                guard let oldIndex = staying.popFirst() else { throw Mismatch(description: "too few old elements") }
                if updates.contains(oldIndex) {
                    guard let element = elements.popFirst() else { throw Mismatch(description: "too few elements") }
                    result.append(element)
                } else {
                    result.append(old[oldIndex])
                }
            }
        }
        guard elements.isEmpty, staying.isEmpty else { throw Mismatch(description: "elements or old elements left over") }
        return result
    }
}
