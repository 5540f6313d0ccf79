import StillwaterTesting
import Testing
@testable import Stillwater

@Suite("Changeset")
struct ChangesetTests {
    /// Checks everything a changeset promises for `old` -> `new` (distinct ids), then returns it.
    @discardableResult
    func expectValid(
        from old: [DiffItem], to new: [DiffItem], sourceLocation: SourceLocation = #_sourceLocation
    ) -> Changeset {
        let changeset = Changeset(from: old, to: new)
        #expect(problems(in: changeset, from: old, to: new) == [], sourceLocation: sourceLocation)
        #expect(changeset.moves.count == fewestMoves(from: old, to: new), "moves are not minimal",
                sourceLocation: sourceLocation)
        let (result, reads) = applyRecordingReads(changeset, to: old, from: new)
        #expect(result == new, "applying to old does not give new", sourceLocation: sourceLocation)
        #expect(reads == expectedReads(changeset, from: old, to: new), "apply read more than what changed",
                sourceLocation: sourceLocation)
        // Identity is total: an id in both lists is never deleted and inserted.
        let oldIDs = Set(old.map(\.id)), newIDs = Set(new.map(\.id))
        #expect(changeset.deletes.allSatisfy { !newIDs.contains(old[$0].id) }, sourceLocation: sourceLocation)
        #expect(changeset.inserts.allSatisfy { !oldIDs.contains(new[$0].id) }, sourceLocation: sourceLocation)
        return changeset
    }

    func items(_ ids: [Int]) -> [DiffItem] { ids.map { DiffItem(id: $0) } }

    @Test("two empty lists give an empty changeset")
    func bothEmpty() {
        let changeset = expectValid(from: [], to: [])
        #expect(changeset.isEmpty)
        #expect(changeset == Changeset())
    }

    @Test("from an empty list everything is inserted, to an empty list everything is deleted")
    func fromAndToEmpty() {
        #expect(expectValid(from: [], to: items([4, 5, 6])) == Changeset(inserts: [0, 1, 2]))
        #expect(expectValid(from: items([4, 5, 6]), to: []) == Changeset(deletes: [0, 1, 2]))
    }

    @Test("identical lists give an empty changeset", arguments: [1, 2, 50, 1_000])
    func identical(count: Int) {
        let list = editedLists(count: count, seed: 7).old
        #expect(expectValid(from: list, to: list).isEmpty)
    }

    @Test("a reversed list keeps one element in place and moves every other", arguments: [2, 3, 10, 200])
    func reversed(count: Int) {
        let list = items(Array(0..<count))
        let changeset = expectValid(from: list, to: list.reversed())
        #expect(changeset.moves.count == count - 1)
        #expect(changeset.deletes.isEmpty && changeset.inserts.isEmpty && changeset.updates.isEmpty)
    }

    @Test("random edits round-trip with valid, minimal changesets",
          arguments: Array(UInt64(1)...40))
    func randomEdits(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let (old, new) = editedLists(count: Int.random(in: 0...300, using: &random), seed: seed)
        expectValid(from: old, to: new)
    }

    @Test("random lists of random, unrelated shapes round-trip", arguments: Array(UInt64(100)...130))
    func unrelated(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func list() -> [DiffItem] {
            let ids = (0..<60).shuffled(using: &random).prefix(Int.random(in: 0...60, using: &random))
            return ids.map { DiffItem(id: $0, value: Int.random(in: 0...1, using: &random)) }
        }
        expectValid(from: list(), to: list())
    }

    @Test("an element that moved and changed is one move, and its content is read at the target")
    func movedAndChanged() {
        let old = [DiffItem(id: 1), DiffItem(id: 2), DiffItem(id: 3)]
        let new = [DiffItem(id: 3, value: 9), DiffItem(id: 1), DiffItem(id: 2)]
        let changeset = expectValid(from: old, to: new)
        #expect(changeset == Changeset(moves: [.init(from: 2, to: 0)]))
    }

    @Test("an element that stayed and changed is an update at its old index")
    func stayedAndChanged() {
        let old = items([1, 2, 3])
        let new = [DiffItem(id: 0), DiffItem(id: 1), DiffItem(id: 2, value: 5), DiffItem(id: 3)]
        #expect(expectValid(from: old, to: new) == Changeset(inserts: [0], updates: [1]))
    }

    @Test("isEqual decides what counts as changed, and is asked only about elements that stay")
    func customEquality() {
        let old = [DiffItem(id: 1, value: 1), DiffItem(id: 2, value: 1), DiffItem(id: 3, value: 1)]
        let new = [DiffItem(id: 3, value: 2), DiffItem(id: 1, value: 2), DiffItem(id: 2, value: 2)]
        var asked: [Int] = []
        let changeset = Changeset(from: old, to: new) { lhs, rhs in
            asked.append(lhs.id)
            return lhs.value % 2 == rhs.value % 2
        }
        #expect(changeset == Changeset(moves: [.init(from: 2, to: 0)], updates: [0, 1]))
        #expect(asked == [1, 2])
        #expect(Changeset(from: old, to: new, isEqual: { _, _ in true }) == Changeset(moves: [.init(from: 2, to: 0)]))
    }

    @Test("the diff works on any collection, not only arrays")
    func collections() {
        let old = "abcd", new = "dacx"
        let changeset = Changeset(from: old, to: new)
        #expect(changeset == Changeset(deletes: [1], inserts: [3], moves: [.init(from: 3, to: 0)]))
        #expect(Array(old).applying(changeset, newElements: Array(new)) == Array(new))
        let slices = Changeset(from: [1, 2, 3, 4][1...], to: [9, 2, 3, 4][1...])
        #expect(slices.isEmpty)
    }

    @Test("an Identifiable type is Diffable by its id without writing diffIdentifier")
    func identifiable() {
        struct Note: Identifiable, Diffable, Equatable {
            var id: String
            var text: String
        }
        let changeset = Changeset(from: [Note(id: "a", text: "x")], to: [Note(id: "a", text: "y"), Note(id: "b", text: "z")])
        #expect(changeset == Changeset(inserts: [1], updates: [0]))
    }

    @Test("descriptions name only the non-empty lists")
    func descriptions() {
        #expect(Changeset().description == "Changeset()")
        #expect(Changeset(from: ["a", "b", "c", "d"], to: ["d", "a", "c", "e"]).description
                == "Changeset(deletes: [1], inserts: [3], moves: [3 -> 0])")
        #expect(Changeset(deletes: [1], updates: [0, 2]).description == "Changeset(deletes: [1], updates: [0, 2])")
    }

    @Test("lists of 100 000 elements diff correctly, with the fewest moves")
    func large() {
        let (old, new) = editedLists(count: 100_000, seed: 42)
        let changeset = Changeset(from: old, to: new)
        #expect(changeset.moves.count == fewestMovesFast(from: old, to: new))
        #expect(changeset.deletes.count == 10_000 && changeset.inserts.count == 10_000)
        #expect(problems(in: changeset, from: old, to: new) == [])
        #expect(old.applying(changeset, newElements: new) == new)
    }
}

@Suite("Changeset with duplicate identifiers")
struct ChangesetDuplicateTests {
    @Test("random lists with repeated identifiers still give valid batch updates", arguments: Array(UInt64(1)...40))
    func randomDuplicates(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func list() -> [DiffItem] {
            (0..<Int.random(in: 0...40, using: &random)).map { _ in
                DiffItem(id: Int.random(in: 0..<8, using: &random), value: Int.random(in: 0...1, using: &random))
            }
        }
        let old = list(), new = list()
        let changeset = Changeset(from: old, to: new)
        #expect(problems(in: changeset, from: old, to: new) == [])
        #expect(old.applying(changeset, newElements: new) == new)
        // Pairing is maximal: an identifier is deleted only where new has fewer occurrences of it.
        for index in changeset.deletes {
            let id = old[index].id
            #expect(old.filter { $0.id == id }.count > new.filter { $0.id == id }.count)
        }
    }

    @Test("extra occurrences are deleted, the first ones paired in order")
    func extraOccurrences() {
        #expect(Changeset(from: ["a", "a", "a"], to: ["a"]) == Changeset(deletes: [1, 2]))
        #expect(Changeset(from: ["a"], to: ["a", "a"]) == Changeset(inserts: [1]))
    }

    @Test("occurrences next to paired elements pair with the occurrence next to the partner")
    func neighbours() {
        // "b" is unique; the "a" before it in new pairs with the "a" before it in old (index 1), so the
        // remaining "a"s pair in order (old 0 with new 2) and that one moves.
        let changeset = Changeset(from: ["a", "a", "b"], to: ["a", "b", "a"])
        #expect(changeset == Changeset(moves: [.init(from: 0, to: 2)]))
        let paired = Changeset(from: ["x", "a", "y", "a"], to: ["y", "a", "x", "a"])
        #expect(paired == Changeset(moves: [.init(from: 2, to: 0), .init(from: 3, to: 1)]))  // "a" 3 follows "y"
    }

    @Test("a list of one repeated identifier diffs by counts")
    func allTheSame() {
        let changeset = Changeset(from: Array(repeating: 7, count: 5), to: Array(repeating: 7, count: 3))
        #expect(changeset == Changeset(deletes: [3, 4]))
    }
}
