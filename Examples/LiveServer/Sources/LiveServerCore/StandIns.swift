// TEMPORARY stand-ins for the library parts that land on `main` as "Live server library parts"
// (Changeset: Codable, ListPatch, ListPatchError, Lifetime, take(during:)). Deleted at the merge.
import Foundation
import Stillwater

extension Changeset: Codable {
    private enum Keys: String, CodingKey { case deletes, inserts, moves, updates }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let moves = try c.decodeIfPresent([[Int]].self, forKey: .moves) ?? []
        self.init(
            deletes: try c.decodeIfPresent([Int].self, forKey: .deletes) ?? [],
            inserts: try c.decodeIfPresent([Int].self, forKey: .inserts) ?? [],
            moves: moves.map { Changeset.Move(from: $0[0], to: $0[1]) },
            updates: try c.decodeIfPresent([Int].self, forKey: .updates) ?? [])
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        if !deletes.isEmpty { try c.encode(deletes, forKey: .deletes) }
        if !inserts.isEmpty { try c.encode(inserts, forKey: .inserts) }
        if !moves.isEmpty { try c.encode(moves.map { [$0.from, $0.to] }, forKey: .moves) }
        if !updates.isEmpty { try c.encode(updates, forKey: .updates) }
    }
}

public struct ListPatchError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

public struct ListPatch<Element> {
    public var changeset: Changeset
    public var elements: [Element]
    public init(changeset: Changeset, elements: [Element]) {
        self.changeset = changeset
        self.elements = elements
    }
    public init(from old: [Element], to new: [Element]) where Element: Diffable & Equatable {
        let changeset = Changeset(from: old, to: new)
        var named = Set(changeset.inserts)
        for move in changeset.moves { named.insert(move.to) }
        for index in Self.newIndexes(ofUpdates: changeset, oldCount: old.count) { named.insert(index) }
        self.init(changeset: changeset, elements: named.sorted().map { new[$0] })
    }
    static func newIndexes(ofUpdates changeset: Changeset, oldCount: Int) -> [Int] {
        let leaving = Set(changeset.deletes).union(changeset.moves.map(\.from))
        let arriving = Set(changeset.inserts).union(changeset.moves.map(\.to))
        let newCount = oldCount - changeset.deletes.count + changeset.inserts.count
        var oldToNew: [Int: Int] = [:]
        var slot = 0
        for old in 0..<oldCount where !leaving.contains(old) {
            while arriving.contains(slot) { slot += 1 }
            oldToNew[old] = slot
            slot += 1
        }
        _ = newCount
        return changeset.updates.compactMap { oldToNew[$0] }
    }
    public var isEmpty: Bool { changeset.isEmpty }
    public func applied(to list: [Element]) throws(ListPatchError) -> [Element] {
        let c = changeset
        let leaving = Set(c.deletes).union(c.moves.map(\.from))
        let newCount = list.count - c.deletes.count + c.inserts.count
        var result = [Element?](repeating: nil, count: newCount)
        var fromNew = Set(c.inserts)
        for move in c.moves { fromNew.insert(move.to) }
        let updated = Set(c.updates)
        var slot = 0
        for old in list.indices where !leaving.contains(old) {
            while fromNew.contains(slot) { slot += 1 }
            guard slot < newCount else { throw ListPatchError(message: "bad") }
            result[slot] = list[old]
            if updated.contains(old) { fromNew.insert(slot) }
            slot += 1
        }
        let targets = fromNew.sorted()
        guard targets.count == elements.count else { throw ListPatchError(message: "bad count") }
        for (index, target) in targets.enumerated() {
            guard target < newCount else { throw ListPatchError(message: "bad") }
            result[target] = elements[index]
        }
        return try result.map { element throws(ListPatchError) in
            guard let element else { throw ListPatchError(message: "hole") }
            return element
        }
    }
    public func apply(to list: inout [Element]) throws(ListPatchError) { list = try applied(to: list) }
}
extension ListPatch: Equatable where Element: Equatable {}
extension ListPatch: Sendable where Element: Sendable {}
extension ListPatch: Codable where Element: Codable {
    private enum Keys: String, CodingKey { case changes, elements }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(changeset: try c.decode(Changeset.self, forKey: .changes),
                  elements: try c.decodeIfPresent([Element].self, forKey: .elements) ?? [])
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(changeset, forKey: .changes)
        try c.encode(elements, forKey: .elements)
    }
}

public final class Lifetime: @unchecked Sendable {
    let subject = ReplaySubject<Void>(bufferSize: 1)
    let lock = NSLock()
    var endedFlag = false
    public static func make() -> (lifetime: Lifetime, token: Lifetime.Token) {
        let lifetime = Lifetime()
        return (lifetime, Token(lifetime))
    }
    public var hasEnded: Bool { lock.withLock { endedFlag } }
    public var ended: Observable<Void> { subject.asObservable() }
    func end() {
        let first = lock.withLock { () -> Bool in defer { endedFlag = true }; return !endedFlag }
        if first { subject.send(()); subject.complete() }
    }
    public final class Token: Sendable {
        let lifetime: Lifetime
        init(_ lifetime: Lifetime) { self.lifetime = lifetime }
        public func end() { lifetime.end() }
        deinit { lifetime.end() }
    }
}

extension ObservableType {
    public func take(during lifetime: Lifetime) -> Observable<Value> { take(until: lifetime.ended) }
}
