import Foundation
import StillwaterTesting
import Testing
@testable import Stillwater

/// A row as a server sends it: identity `id`, content `text`.
private struct Row: Diffable, Codable, Equatable {
    var id: Int
    var text: String
    var diffIdentifier: Int { id }
}

private func json<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

private func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(text.utf8))
}

/// Random rows: ids from a small range (so lists share many), texts from a few words.
private func randomRows(_ random: inout SeededRandom) -> [Row] {
    let ids = Array((0..<12).shuffled(using: &random).prefix(Int.random(in: 0...10, using: &random)))
    return ids.map { Row(id: $0, text: ["a", "b", "c"].randomElement(using: &random)!) }
}

@Suite("ListPatch")
struct ListPatchTests {
    @Test("a patch turns the old list into the new one, also after a JSON round trip, for random lists")
    func randomLists() throws {
        var random = SeededRandom(seed: 18)
        for _ in 0..<500 {
            let old = randomRows(&random), new = randomRows(&random)
            let patch = ListPatch(from: old, to: new)
            let changeset = patch.changeset
            #expect(patch.elements.count == changeset.inserts.count + changeset.moves.count + changeset.updates.count)
            #expect(try patch.applied(to: old) == new)
            let travelled = try decode(ListPatch<Row>.self, try json(patch))
            #expect(travelled == patch)
            var replica = old
            try travelled.apply(to: &replica)
            #expect(replica == new)
        }
    }

    @Test("the patch carries only the rows that changed or moved")
    func carriesOnlyChanges() {
        let old = [Row(id: 1, text: "milk"), Row(id: 2, text: "eggs"), Row(id: 3, text: "tea")]
        let new = [Row(id: 1, text: "milk"), Row(id: 2, text: "eggs!"), Row(id: 3, text: "tea"), Row(id: 4, text: "jam")]
        let patch = ListPatch(from: old, to: new)
        #expect(patch.changeset == Changeset(inserts: [3], updates: [1]))
        #expect(patch.elements == [Row(id: 2, text: "eggs!"), Row(id: 4, text: "jam")])
        #expect(ListPatch(from: old, to: old).isEmpty)
        #expect(ListPatch(from: old, to: old).elements.isEmpty)
    }

    @Test("a patch that does not fit the list throws, and the list is left as it was",
          arguments: [
            (Changeset(deletes: [5]), 0, "old index 5 is out of range 0..<3"),
            (Changeset(inserts: [9]), 1, "new index 9 is out of range 0..<4"),
            (Changeset(deletes: [1], updates: [1]), 1, "old index 1 appears twice"),
            (Changeset(inserts: [0], moves: [.init(from: 2, to: 0)]), 2, "new index 0 appears twice"),
            (Changeset(updates: [0]), 0, "0 elements for a changeset that names more"),
            (Changeset(updates: [0]), 2, "2 elements for a changeset that names 1"),
          ])
    func misfit(changeset: Changeset, elementCount: Int, message: String) {
        var list = ["a", "b", "c"]
        let patch = ListPatch(unchecked: changeset, elements: Array(repeating: "x", count: elementCount))
        #expect {
            try patch.apply(to: &list)
        } throws: { error in
            (error as? ListPatchError)?.message.contains(message) == true
        }
        #expect(list == ["a", "b", "c"])
    }

    @Test("random patches applied to random lists either throw or make a list of the counted length, never trap")
    func randomPatchesNeverTrap() {
        var random = SeededRandom(seed: 7)
        var applied = 0, refused = 0
        for _ in 0..<3_000 {
            let list = Array(0..<Int.random(in: 0...6, using: &random))
            let extremes = [Int.min, -1, Int.max, Int.max - 1]
            func index() -> Int {
                Int.random(in: 0..<10, using: &random) == 0 ? extremes.randomElement(using: &random)! : Int.random(in: -1...7, using: &random)
            }
            func indexes() -> [Int] { (0..<Int.random(in: 0...3, using: &random)).map { _ in index() } }
            let changeset = Changeset(
                deletes: indexes(), inserts: indexes(),
                moves: (0..<Int.random(in: 0...2, using: &random)).map { _ in
                    .init(from: index(), to: index())
                },
                updates: indexes())
            let patch = ListPatch(unchecked: changeset, elements: Array(repeating: 99, count: Int.random(in: 0...8, using: &random)))
            do {
                let result = try patch.applied(to: list)
                #expect(result.count == list.count - changeset.deletes.count + changeset.inserts.count)
                applied += 1
            } catch {
                refused += 1
            }
        }
        #expect(applied > 0 && refused > 0)
    }

    @Test("the JSON shape is the documented one")
    func shape() throws {
        let patch = ListPatch(
            changeset: Changeset(deletes: [1], inserts: [2], moves: [.init(from: 2, to: 0)]), elements: ["c", "d"])
        #expect(try json(patch) == #"{"changes":{"deletes":[1],"inserts":[2],"moves":[[2,0]]},"elements":["c","d"]}"#)
        #expect(try json(Changeset()) == "{}")
        #expect(try json(Changeset(updates: [0, 3])) == #"{"updates":[0,3]}"#)
    }

    @Test("a patch whose element count does not match its changeset does not decode")
    func decodingCountsElements() {
        #expect(throws: DecodingError.self) {
            try decode(ListPatch<String>.self, #"{"changes":{"inserts":[0,1]},"elements":["x"]}"#)
        }
        #expect(throws: DecodingError.self) { try decode(ListPatch<String>.self, #"{"elements":[]}"#) }
        #expect(throws: DecodingError.self) { try decode(ListPatch<String>.self, #"{"changes":{},"elements":[],"extra":1}"#) }
    }
}

@Suite("Changeset and SectionedChangeset as JSON")
struct ChangesetCodingTests {
    @Test("a changeset survives a JSON round trip, and missing keys are empty lists")
    func roundTrip() throws {
        let changeset = Changeset(deletes: [0, 4], inserts: [1], moves: [.init(from: 3, to: 0)], updates: [2])
        #expect(try decode(Changeset.self, try json(changeset)) == changeset)
        #expect(try decode(Changeset.self, #"{"inserts":[2]}"#) == Changeset(inserts: [2]))
        #expect(try decode(Changeset.self, "{}") == Changeset())
    }

    @Test("an impossible changeset does not decode, with the reason",
          arguments: [
            #"{"deletes":[-1]}"#, #"{"deletes":[1],"updates":[1]}"#, #"{"moves":[[1,0]],"deletes":[1]}"#,
            #"{"inserts":[0],"moves":[[3,0]]}"#, #"{"moves":[[1,2,3]]}"#, #"{"moves":[[1]]}"#, #"{"moves":[[-2,0]]}"#,
            #"{"deletes":[1.5]}"#, #"{"deletes":"1"}"#, #"[]"#, #"{"delets":[0]}"#, #"{"deletes":[2,0]}"#,
            #"{"inserts":[1,1]}"#, #"{"moves":[[0,3],[1,2]]}"#,
          ])
    func impossible(text: String) {
        #expect(throws: DecodingError.self) { try decode(Changeset.self, text) }
    }

    @Test("a sectioned changeset survives a JSON round trip in the documented shape")
    func sectioned() throws {
        let old = [ListSection("Today", items: ["milk", "eggs"]), ListSection("Later", items: ["bread"])]
        let new = [ListSection("Later", items: ["bread", "eggs"]), ListSection("Today", items: ["milk", "tea"])]
        let changeset = SectionedChangeset(from: old, to: new)
        let text = try json(changeset)
        #expect(text == #"{"itemInserts":[[1,1]],"itemMoves":[[[0,1],[0,1]]],"sections":{"moves":[[1,0]]}}"#)
        let travelled = try decode(SectionedChangeset.self, text)
        #expect(travelled == changeset)
        #expect(old.applying(travelled, newSections: new) == new)
        #expect(throws: DecodingError.self) {
            try decode(SectionedChangeset.self, #"{"itemDeletes":[[0,1]],"itemUpdates":[[0,1]]}"#)
        }
        #expect(throws: DecodingError.self) { try decode(SectionedChangeset.self, #"{"itemInserts":[[0,-1]]}"#) }
        #expect(throws: DecodingError.self) { try decode(SectionedChangeset.self, #"{"itemInsert":[[0,1]]}"#) }
    }
}

extension ListPatch {
    /// A patch built without the count check, so tests can make ones that do not fit.
    fileprivate init(unchecked changeset: Changeset, elements: [Element]) {
        self.init(changeset: Changeset(), elements: [])
        self.changeset = changeset
        self.elements = elements
    }
}
