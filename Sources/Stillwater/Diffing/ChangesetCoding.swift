// The JSON shapes of changesets: compact (a move is two numbers), stable, and checked when decoded, so a
// changeset can travel as a patch. Documented on ``Changeset`` and ``SectionedChangeset``; changing a shape
// breaks every client that reads it.

extension Changeset.Move: Codable {
    /// Decodes a move from `[from, to]`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` unless it is two indexes of 0 or more.
    public init(from decoder: any Decoder) throws {
        let (from, to) = try decodeIndexPair(from: decoder, shape: "a move is [from, to]")
        self.init(from: from, to: to)
    }

    /// Encodes the move as `[from, to]`.
    public func encode(to encoder: any Encoder) throws {
        try encodeIndexPair(from, to, to: encoder)
    }
}

extension Changeset: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case deletes, inserts, moves, updates
    }

    /// Decodes the JSON shape documented on the type. A missing key is an empty list.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for an unknown key (a misspelt one would otherwise make a
    ///   patch that changes nothing), a list out of its ascending order, a negative index, or an index
    ///   with two roles (an old index twice among deletes, move sources and updates, or a new index twice
    ///   among inserts and move targets).
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(in: decoder, known: CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let changeset = Changeset(
            deletes: try container.decodeIfPresent([Int].self, forKey: .deletes) ?? [],
            inserts: try container.decodeIfPresent([Int].self, forKey: .inserts) ?? [],
            moves: try container.decodeIfPresent([Move].self, forKey: .moves) ?? [],
            updates: try container.decodeIfPresent([Int].self, forKey: .updates) ?? []
        )
        if let problem = changeset.roleProblem {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: problem))
        }
        self = changeset
    }

    /// Encodes the JSON shape documented on the type, leaving out the empty lists.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !deletes.isEmpty { try container.encode(deletes, forKey: .deletes) }
        if !inserts.isEmpty { try container.encode(inserts, forKey: .inserts) }
        if !moves.isEmpty { try container.encode(moves, forKey: .moves) }
        if !updates.isEmpty { try container.encode(updates, forKey: .updates) }
    }

    /// Why the indexes cannot describe any list change, or nil. Whether they fit a particular list is
    /// checked when the changeset is applied.
    var roleProblem: String? {
        for (name, list) in [("deletes", deletes), ("inserts", inserts), ("moves (by to)", moves.map(\.to)), ("updates", updates)]
        where zip(list, list.dropFirst()).contains(where: { $0 >= $1 }) {
            return "\(name) must be ascending, each index once: \(list)"
        }
        return firstRoleProblem(old: deletes + moves.map(\.from) + updates, new: inserts + moves.map(\.to), negative: { $0 < 0 })
    }
}

extension SectionedChangeset.ItemPath: Codable {
    /// Decodes a path from `[section, item]`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` unless it is two indexes of 0 or more.
    public init(from decoder: any Decoder) throws {
        let (section, item) = try decodeIndexPair(from: decoder, shape: "an item path is [section, item]")
        self.init(section: section, item: item)
    }

    /// Encodes the path as `[section, item]`.
    public func encode(to encoder: any Encoder) throws {
        try encodeIndexPair(section, item, to: encoder)
    }
}

extension SectionedChangeset.ItemMove: Codable {
    /// Decodes an item move from `[[fromSection, fromItem], [toSection, toItem]]`.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let from = try container.decode(SectionedChangeset.ItemPath.self)
        let to = try container.decode(SectionedChangeset.ItemPath.self)
        guard container.isAtEnd else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath, debugDescription: "an item move is [from, to], two item paths"))
        }
        self.init(from: from, to: to)
    }

    /// Encodes the move as `[[fromSection, fromItem], [toSection, toItem]]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(from)
        try container.encode(to)
    }
}

extension SectionedChangeset: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case sections, itemDeletes, itemInserts, itemMoves, itemUpdates
    }

    /// Decodes the JSON shape documented on the type. A missing key is an empty list (or, for
    /// `sections`, an empty changeset).
    ///
    /// - Throws: `DecodingError.dataCorrupted` for an unknown key, a negative index, or an index or item
    ///   path with two roles.
    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(in: decoder, known: CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let changeset = SectionedChangeset(
            sections: try container.decodeIfPresent(Changeset.self, forKey: .sections) ?? Changeset(),
            itemDeletes: try container.decodeIfPresent([ItemPath].self, forKey: .itemDeletes) ?? [],
            itemInserts: try container.decodeIfPresent([ItemPath].self, forKey: .itemInserts) ?? [],
            itemMoves: try container.decodeIfPresent([ItemMove].self, forKey: .itemMoves) ?? [],
            itemUpdates: try container.decodeIfPresent([ItemPath].self, forKey: .itemUpdates) ?? []
        )
        let problem = firstRoleProblem(
            old: changeset.itemDeletes + changeset.itemMoves.map(\.from) + changeset.itemUpdates,
            new: changeset.itemInserts + changeset.itemMoves.map(\.to), negative: { _ in false })
        if let problem {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: problem))
        }
        self = changeset
    }

    /// Encodes the JSON shape documented on the type, leaving out what is empty.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !sections.isEmpty { try container.encode(sections, forKey: .sections) }
        if !itemDeletes.isEmpty { try container.encode(itemDeletes, forKey: .itemDeletes) }
        if !itemInserts.isEmpty { try container.encode(itemInserts, forKey: .itemInserts) }
        if !itemMoves.isEmpty { try container.encode(itemMoves, forKey: .itemMoves) }
        if !itemUpdates.isEmpty { try container.encode(itemUpdates, forKey: .itemUpdates) }
    }
}

/// The first index that is negative or has two roles: among `old` (deletes, move sources, updates) or
/// among `new` (inserts, move targets). Nil when there is none.
private func firstRoleProblem<Index: Hashable>(
    old: [Index], new: [Index], negative: (Index) -> Bool
) -> String? {
    for (indexes, side, roles) in [(old, "old", "deletes, move sources and updates"), (new, "new", "inserts and move targets")] {
        var seen = Set<Index>()
        for index in indexes {
            if negative(index) { return "\(side) index \(index) is negative" }
            if !seen.insert(index).inserted { return "\(side) index \(index) appears twice among \(roles)" }
        }
    }
    return nil
}

/// Two indexes of 0 or more, as a JSON array of two numbers.
private func decodeIndexPair(from decoder: any Decoder, shape: String) throws -> (Int, Int) {
    var container = try decoder.unkeyedContainer()
    let first = try container.decode(Int.self)
    let second = try container.decode(Int.self)
    guard container.isAtEnd, first >= 0, second >= 0 else {
        throw DecodingError.dataCorrupted(.init(
            codingPath: decoder.codingPath, debugDescription: "\(shape), two indexes of 0 or more"))
    }
    return (first, second)
}

private func encodeIndexPair(_ first: Int, _ second: Int, to encoder: any Encoder) throws {
    var container = encoder.unkeyedContainer()
    try container.encode(first)
    try container.encode(second)
}

/// Any key of a JSON object, to find the ones a shape does not know.
private struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Throws `DecodingError.dataCorrupted` when the object has a key that `known` does not list.
func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(in decoder: any Decoder, known: Keys.Type) throws {
    let container = try decoder.container(keyedBy: AnyCodingKey.self)
    let names = Set(Keys.allCases.map(\.stringValue))
    if let unknown = container.allKeys.first(where: { !names.contains($0.stringValue) }) {
        throw DecodingError.dataCorrupted(.init(
            codingPath: decoder.codingPath,
            debugDescription: "unknown key \"\(unknown.stringValue)\"; the keys are \(names.sorted())"))
    }
}
