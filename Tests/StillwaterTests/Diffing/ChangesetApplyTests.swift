import StillwaterTesting
import Testing
@testable import Stillwater

@Suite("Applying a changeset")
struct ChangesetApplyTests {
    @Test("a mirror of the list follows each changeset, rebuilding only what changed", arguments: Array(UInt64(1)...10))
    func mirror(seed: UInt64) {
        let (old, new) = editedLists(count: 200, seed: seed)
        var rendered = old.map { "row \($0)" }
        var renders = 0
        let changeset = Changeset(from: old, to: new)
        rendered.apply(changeset) { index in
            renders += 1
            return "row \(new[index])"
        }
        #expect(rendered == new.map { "row \($0)" })
        #expect(renders == changeset.inserts.count + changeset.moves.count + changeset.updates.count)
    }

    @Test("a changeset built by hand applies by the batch-update index rules")
    func byHand() {
        // Delete old 1, move old 3 to new 0, update old 0, insert at new 3: kept 0 and 2 fill new 1 and 2.
        let changeset = Changeset(deletes: [1], inserts: [3], moves: [.init(from: 3, to: 0)], updates: [0])
        let result = ["a", "b", "c", "d"].applying(changeset) { "new\($0)" }
        #expect(result == ["new0", "new1", "c", "new3"])
    }

    @Test("applying the changeset of a sequence of lists, one after another, follows the sequence")
    func chained() {
        var random = SeededRandom(seed: 99)
        var shown: [DiffItem] = []
        var current: [DiffItem] = []
        for _ in 0..<30 {
            let next = (0..<40).shuffled(using: &random).prefix(Int.random(in: 0...40, using: &random))
                .map { DiffItem(id: $0, value: Int.random(in: 0...2, using: &random)) }
            shown.apply(Changeset(from: current, to: next)) { next[$0] }
            current = next
            #expect(shown == current)
        }
    }

    @Test("a changeset whose indexes do not fit the list stops the process with a message naming them")
    func outOfRange() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = [1, 2].applying(Changeset(deletes: [5])) { $0 }
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("old index 5 is out of range"), "message: \(message)")
        #endif
    }

    @Test("an index with two roles stops the process with a message saying so")
    func twoRoles() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = [1, 2].applying(Changeset(deletes: [0], updates: [0])) { $0 }
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("old index 0 appears twice"), "message: \(message)")
        #endif
    }
}
