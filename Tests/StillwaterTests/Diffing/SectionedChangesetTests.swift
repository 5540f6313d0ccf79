import StillwaterTesting
import Testing
@testable import Stillwater

typealias TestSection = ListSection<DiffItem, DiffItem>

/// Two versions of a sectioned list: sections deleted, inserted, moved and retitled, and items deleted,
/// inserted, moved (within and across sections, into new sections too) and updated. Ids are distinct.
func editedSections(seed: UInt64) -> (old: [TestSection], new: [TestSection]) {
    var random = SeededRandom(seed: seed)
    var nextItem = 0
    func freshItems(_ count: Int) -> [DiffItem] {
        defer { nextItem += count }
        return (nextItem..<nextItem + count).map { DiffItem(id: $0) }
    }
    func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    let sectionCount = Int.random(in: 0...8, using: &random)
    let old = (0..<sectionCount).map { id in
        TestSection(DiffItem(id: id), items: freshItems(Int.random(in: 0...12, using: &random)))
    }
    var new: [TestSection] = []
    var movers: [DiffItem] = []
    for section in old where !chance(15) {
        var kept = TestSection(DiffItem(id: section.model.id, value: chance(20) ? 1 : 0), items: [])
        for item in section.items where !chance(10) {
            let item = DiffItem(id: item.id, value: chance(10) ? 1 : 0)
            if chance(10) { movers.append(item) } else { kept.items.append(item) }
        }
        new.append(kept)
    }
    for id in sectionCount..<sectionCount + Int.random(in: 0...2, using: &random) {
        new.insert(TestSection(DiffItem(id: id), items: freshItems(Int.random(in: 0...4, using: &random))),
                   at: Int.random(in: 0...new.count, using: &random))
    }
    if new.count > 1 {
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            new.swapAt(Int.random(in: 0..<new.count, using: &random), Int.random(in: 0..<new.count, using: &random))
        }
    }
    if !new.isEmpty {
        for item in movers + freshItems(Int.random(in: 0...6, using: &random)) {
            let section = Int.random(in: 0..<new.count, using: &random)
            new[section].items.insert(item, at: Int.random(in: 0...new[section].items.count, using: &random))
        }
    }
    return (old, new)
}

/// What is wrong with the item changes of `changeset` for `old` -> `new`, checked without the library:
/// order, ranges, surviving sections only, one role per path, identity of moves and updates, and pairing
/// of every item present in surviving sections of both lists.
func itemProblems(in changeset: SectionedChangeset, from old: [TestSection], to new: [TestSection]) -> [String] {
    typealias Path = SectionedChangeset.ItemPath
    var found: [String] = []
    let deletedSections = Set(changeset.sections.deletes), insertedSections = Set(changeset.sections.inserts)
    func item(_ path: Path, in sections: [TestSection]) -> DiffItem? {
        guard sections.indices.contains(path.section) else { return nil }
        let items = sections[path.section].items
        return items.indices.contains(path.item) ? items[path.item] : nil
    }
    func check(
        _ paths: [Path], in sections: [TestSection], skipping gone: Set<Int>, _ name: String, ascending: Bool = true
    ) {
        if ascending, zip(paths, paths.dropFirst()).contains(where: { $0 >= $1 }) {
            found.append("\(name) not ascending")
        }
        for path in paths where item(path, in: sections) == nil { found.append("\(name) \(path) out of range") }
        for path in paths where gone.contains(path.section) {
            found.append("\(name) \(path) in a deleted or inserted section")
        }
    }
    check(changeset.itemDeletes, in: old, skipping: deletedSections, "item deletes")
    check(changeset.itemUpdates, in: old, skipping: deletedSections, "item updates")
    check(changeset.itemMoves.map(\.from), in: old, skipping: deletedSections, "item move sources", ascending: false)
    check(changeset.itemInserts, in: new, skipping: insertedSections, "item inserts")
    check(changeset.itemMoves.map(\.to), in: new, skipping: insertedSections, "item move targets")
    guard found.isEmpty else { return found }

    let oldRoles = changeset.itemDeletes + changeset.itemUpdates + changeset.itemMoves.map(\.from)
    let newRoles = changeset.itemInserts + changeset.itemMoves.map(\.to)
    if Set(oldRoles).count != oldRoles.count { found.append("an old path plays two roles") }
    if Set(newRoles).count != newRoles.count { found.append("a new path plays two roles") }
    for move in changeset.itemMoves where item(move.from, in: old)?.id != item(move.to, in: new)?.id {
        found.append("move \(move) joins different items")
    }
    // Every item in surviving sections of both lists is paired: never deleted or inserted.
    func survivingIDs(_ sections: [TestSection], skipping gone: Set<Int>) -> Set<Int> {
        Set(sections.enumerated().filter { !gone.contains($0.offset) }.flatMap { $0.element.items.map(\.id) })
    }
    let oldIDs = survivingIDs(old, skipping: deletedSections), newIDs = survivingIDs(new, skipping: insertedSections)
    for path in changeset.itemDeletes where newIDs.contains(item(path, in: old)!.id) {
        found.append("\(path) deleted but still there")
    }
    for path in changeset.itemInserts where oldIDs.contains(item(path, in: new)!.id) {
        found.append("\(path) inserted but was there")
    }
    return found
}

/// The fewest item moves: items that changed section, plus, per section pair, the items that stayed in
/// it minus a longest run that kept its order.
func fewestItemMoves(from old: [TestSection], to new: [TestSection]) -> Int {
    let newSectionIndex = Dictionary(uniqueKeysWithValues: new.enumerated().map { ($1.model.id, $0) })
    let newItemSection = Dictionary(uniqueKeysWithValues: new.enumerated().flatMap { index, section in
        section.items.map { ($0.id, index) }
    })
    let oldSectionIDs = Set(old.map(\.model.id))
    var moves = 0
    for section in old {
        guard let partner = newSectionIndex[section.model.id] else { continue }
        let stayers = section.items.filter { newItemSection[$0.id] == partner }
        // Items that went to another surviving section (to an inserted one is a delete).
        moves += section.items.filter { item in
            newItemSection[item.id].map { $0 != partner && oldSectionIDs.contains(new[$0].model.id) } ?? false
        }.count
        let stayerIDs = Set(stayers.map(\.id))
        moves += fewestMoves(from: stayers, to: new[partner].items.filter { stayerIDs.contains($0.id) })
    }
    return moves
}

@Suite("SectionedChangeset")
struct SectionedChangesetTests {
    @Test("random sectioned edits round-trip with valid changesets and the fewest item moves",
          arguments: Array(UInt64(1)...60))
    func randomEdits(seed: UInt64) {
        let (old, new) = editedSections(seed: seed)
        let changeset = SectionedChangeset(from: old, to: new)
        #expect(problems(in: changeset.sections, from: old.map(\.model), to: new.map(\.model)) == [])
        #expect(changeset.sections.moves.count == fewestMoves(from: old.map(\.model), to: new.map(\.model)))
        #expect(itemProblems(in: changeset, from: old, to: new) == [])
        #expect(changeset.itemMoves.count == fewestItemMoves(from: old, to: new))

        var sectionReads: [Int] = []
        var itemReads: [SectionedChangeset.ItemPath] = []
        let result = old.applying(changeset, newSection: { index in
            sectionReads.append(index)
            return new[index]
        }, newItem: { path in
            itemReads.append(path)
            return new[path.section].items[path.item]
        })
        #expect(result == new)
        #expect(sectionReads.count == changeset.sections.inserts.count + changeset.sections.moves.count
                + changeset.sections.updates.count)
        #expect(itemReads.count == changeset.itemInserts.count + changeset.itemMoves.count + changeset.itemUpdates.count)
        #expect(old.applying(changeset, newSections: new) == new)
    }

    @Test("an item moving to another section is one move, with paths in old and new sections")
    func crossSectionMove() {
        let old = [ListSection("Today", items: ["milk", "eggs"]), ListSection("Later", items: ["bread"])]
        let new = [ListSection("Today", items: ["milk"]), ListSection("Later", items: ["eggs", "bread"])]
        let changeset = SectionedChangeset(from: old, to: new)
        let move = SectionedChangeset.ItemMove(from: .init(section: 0, item: 1), to: .init(section: 1, item: 0))
        #expect(changeset == SectionedChangeset(itemMoves: [move]))
        #expect(changeset.itemMoves.description == "[[0, 1] -> [1, 0]]")
        #expect(old.applying(changeset, newSections: new) == new)
    }

    @Test("sections that moved take their items along; item paths use old and new section indexes")
    func sectionMoves() {
        let old = [ListSection("Today", items: ["milk", "eggs"]), ListSection("Later", items: ["bread"])]
        let new = [ListSection("Later", items: ["bread", "eggs"]), ListSection("Today", items: ["milk", "tea"])]
        let changeset = SectionedChangeset(from: old, to: new)
        #expect(changeset.description == "SectionedChangeset(sections: Changeset(moves: [1 -> 0]), "
                + "itemInserts: [[1, 1]], itemMoves: [[0, 1] -> [0, 1]])")
        #expect("\(changeset.sections) \(changeset.itemInserts) \(changeset.itemMoves)"
                == "Changeset(moves: [1 -> 0]) [[1, 1]] [[0, 1] -> [0, 1]]")
        #expect(old.applying(changeset, newSections: new) == new)
    }

    @Test("items of deleted and inserted sections are named by no item change")
    func deletedAndInsertedSections() {
        let old = [ListSection("A", items: ["a1", "a2"]), ListSection("B", items: ["b1"])]
        let new = [ListSection("B", items: ["b1", "a1"]), ListSection("C", items: ["c1", "a2"])]
        let changeset = SectionedChangeset(from: old, to: new)
        // "A" goes with its items; "a1" reappears in surviving "B" (an insert); "a2" in new "C" (implied).
        #expect(changeset == SectionedChangeset(
            sections: Changeset(deletes: [0], inserts: [1]),
            itemInserts: [.init(section: 0, item: 1)]
        ))
        #expect(old.applying(changeset, newSections: new) == new)
    }

    @Test("a section whose own content changed is updated, not its unchanged items")
    func sectionUpdate() {
        let old = [TestSection(DiffItem(id: 1), items: [DiffItem(id: 10)])]
        let new = [TestSection(DiffItem(id: 1, value: 3), items: [DiffItem(id: 10), DiffItem(id: 11)])]
        let changeset = SectionedChangeset(from: old, to: new)
        #expect(changeset == SectionedChangeset(
            sections: Changeset(updates: [0]), itemInserts: [.init(section: 0, item: 1)]
        ))
        #expect(old.applying(changeset, newSections: new) == new)
    }

    @Test("item updates are ascending old paths even when sections swapped")
    func updatesAscending() {
        let old = [TestSection(DiffItem(id: 1), items: [DiffItem(id: 10)]),
                   TestSection(DiffItem(id: 2), items: [DiffItem(id: 20)])]
        let new = [TestSection(DiffItem(id: 2), items: [DiffItem(id: 20, value: 1)]),
                   TestSection(DiffItem(id: 1), items: [DiffItem(id: 10, value: 1)])]
        let changeset = SectionedChangeset(from: old, to: new)
        #expect(changeset.itemUpdates == [.init(section: 0, item: 0), .init(section: 1, item: 0)])
        #expect(old.applying(changeset, newSections: new) == new)
    }

    @Test("custom equality compares sections' own content and items")
    func customEquality() {
        let old = [TestSection(DiffItem(id: 1), items: [DiffItem(id: 10)])]
        let new = [TestSection(DiffItem(id: 1, value: 2), items: [DiffItem(id: 10, value: 2)])]
        let ignoring = SectionedChangeset(
            from: old, to: new, isSectionEqual: { _, _ in true }, isItemEqual: { _, _ in true }
        )
        #expect(ignoring.isEmpty)
        let strict = SectionedChangeset(from: old, to: new, isSectionEqual: { $0.model == $1.model }, isItemEqual: ==)
        #expect(strict == SectionedChangeset(
            sections: Changeset(updates: [0]), itemUpdates: [.init(section: 0, item: 0)]
        ))
    }

    @Test("repeated item identifiers across sections still give a valid changeset", arguments: Array(UInt64(1)...20))
    func duplicates(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func sections() -> [ListSection<String, Int>] {
            ["A", "B", "C"].shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random)).map { title in
                let count = Int.random(in: 0...6, using: &random)
                return ListSection(title, items: (0..<count).map { _ in Int.random(in: 0..<4, using: &random) })
            }
        }
        let old = sections(), new = sections()
        let changeset = SectionedChangeset(from: old, to: new)
        #expect(old.applying(changeset, newSections: new) == new)
    }

    @Test("an item change naming a deleted section stops the process with a message")
    func badPath() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let old = [ListSection("A", items: ["a"])]
            let changeset = SectionedChangeset(
                sections: Changeset(deletes: [0]), itemDeletes: [.init(section: 0, item: 0)]
            )
            _ = old.applying(changeset, newSections: [])
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("names no surviving section"), "message: \(message)")
        #endif
    }
}
