import StillwaterTesting
import Testing
@testable import TodoCore

@Suite("TodoMerge")
struct TodoMergeTests {
    let base = TodoList(titles: ["milk", "eggs", "tea"])

    func changed(_ list: TodoList, _ actions: TodoAction...) -> TodoList {
        var list = list
        for action in actions { action.reduce(&list) }
        return list
    }

    func summary(_ list: TodoList) -> [String] {
        list.items.map { "\($0.id) \($0.title)\($0.isDone ? " x" : "")" }
    }

    @Test("when only one side changed, the merge is that side exactly")
    func oneSide() {
        let ours = changed(base, .toggle(id: 1), .add("bread"))
        #expect(TodoMerge(base: base, ours: ours, theirs: base).list == ours)
        #expect(TodoMerge(base: base, ours: base, theirs: ours).list == ours)
        #expect(TodoMerge(base: base, ours: ours, theirs: ours).list == ours)
        #expect(TodoMerge(base: base, ours: ours, theirs: base).conflicts.isEmpty)
    }

    @Test("both sides add at the end: theirs first, ours after with fresh identities")
    func bothAdd() {
        let ours = changed(base, .add("bread"), .add("jam"))
        let theirs = changed(base, .add("rice"))
        let merge = TodoMerge(base: base, ours: ours, theirs: theirs)
        #expect(summary(merge.list) == ["1 milk", "2 eggs", "3 tea", "4 rice", "5 bread", "6 jam"])
        #expect(merge.list.nextID == 7)
        #expect(merge.conflicts.isEmpty)
    }

    @Test("changes to different fields of one item are both kept")
    func differentFields() {
        let merge = TodoMerge(base: base, ours: changed(base, .toggle(id: 2)), theirs: changed(base, .rename(id: 2, title: "brown eggs")))
        #expect(summary(merge.list) == ["1 milk", "2 brown eggs x", "3 tea"])
        #expect(merge.conflicts.isEmpty)
    }

    @Test("the same field changed differently on both sides: ours wins, and the conflict is reported")
    func sameField() {
        let merge = TodoMerge(base: base, ours: changed(base, .rename(id: 1, title: "oat milk")),
                              theirs: changed(base, .rename(id: 1, title: "soy milk")))
        #expect(summary(merge.list).first == "1 oat milk")
        #expect(merge.conflicts == ["both programs changed the title of \"milk\"; this one's was kept"])
    }

    @Test("a delete wins over no change; a change wins over a delete, reported")
    func deletes() {
        #expect(summary(TodoMerge(base: base, ours: changed(base, .delete(id: 2)), theirs: changed(base, .toggle(id: 1))).list)
                == ["1 milk x", "3 tea"])
        let keptTheirs = TodoMerge(base: base, ours: changed(base, .delete(id: 2)), theirs: changed(base, .toggle(id: 2)))
        #expect(summary(keptTheirs.list) == ["1 milk", "2 eggs x", "3 tea"])
        #expect(keptTheirs.conflicts == ["\"eggs\" was deleted here but changed by the other program; it was kept"])
        let keptOurs = TodoMerge(base: base, ours: changed(base, .toggle(id: 3)), theirs: changed(base, .delete(id: 3)))
        #expect(summary(keptOurs.list) == ["1 milk", "2 eggs", "3 tea x"])
        #expect(keptOurs.conflicts == ["\"tea\" was deleted by the other program but changed here; it was kept"])
        #expect(TodoMerge(base: base, ours: changed(base, .delete(id: 1)), theirs: changed(base, .delete(id: 1), .add("x"))).list.items.map(\.title)
                == ["eggs", "tea", "x"])
    }

    @Test("our reordering is kept when theirs did not reorder; theirs wins when both did")
    func order() {
        let ours = changed(base, .move(id: 3, direction: .up, filter: .all))
        let merge = TodoMerge(base: base, ours: ours, theirs: changed(base, .add("rice")))
        #expect(summary(merge.list) == ["1 milk", "3 tea", "2 eggs", "4 rice"])
        let both = TodoMerge(base: base, ours: ours, theirs: changed(base, .move(id: 1, direction: .down, filter: .all)))
        #expect(summary(both.list) == ["2 eggs", "1 milk", "3 tea"])
    }

    @Test("unknown top-level fields: theirs kept, ours changed wins")
    func otherFields() {
        var ours = base, theirs = base
        ours.otherFields["owner"] = .string("ada")
        theirs.otherFields["team"] = .string("ops")
        #expect(TodoMerge(base: base, ours: ours, theirs: theirs).list.otherFields == ["owner": .string("ada"), "team": .string("ops")])
    }

    @Test("after the identities ran out, both sides reuse the same free one: the merge keeps both items apart")
    func identitiesExhausted() {
        let last = TodoList.identities.upperBound
        let full = TodoList(items: [TodoItem(id: last, title: "last")])
        let merge = TodoMerge(base: full, ours: changed(full, .add("x")), theirs: changed(full, .add("y")))
        #expect(summary(merge.list) == ["\(last) last", "1 y", "2 x"])

        // One identity left: both take it; ours must not go past the range.
        let almost = TodoList(items: [TodoItem(id: 5, title: "a")], nextID: last)
        let edge = TodoMerge(base: almost, ours: changed(almost, .add("x")), theirs: changed(almost, .add("y")))
        #expect(edge.list.items.map(\.title) == ["a", "y", "x"])
        #expect(edge.list.items.allSatisfy { TodoList.identities.contains($0.id) })
        #expect(Set(edge.list.items.map(\.id)).count == 3)
        #expect(TodoFormat.parse(TodoFormat.encode(edge.list)) == .list(edge.list), "the merged list loads again")
    }

    @Test("random edits on both sides: nothing either side added is lost, identities stay unique", arguments: 0..<40)
    func randomEdits(seed: Int) {
        var generator = SeededRandom(seed: UInt64(seed))
        func edits(_ list: TodoList, tag: String) -> TodoList {
            var list = list
            for step in 0..<Int.random(in: 1...8, using: &generator) {
                let ids = list.items.map(\.id)
                let id = ids.randomElement(using: &generator) ?? 1
                let actions: [TodoAction] = [
                    .add("\(tag)\(step)"), .toggle(id: id), .rename(id: id, title: "\(tag) renamed \(step)"),
                    .delete(id: id), .move(id: id, direction: Bool.random(using: &generator) ? .up : .down, filter: .all),
                ]
                actions.randomElement(using: &generator)!.reduce(&list)
            }
            return list
        }
        let start = TodoList(titles: (0..<Int.random(in: 0...6, using: &generator)).map { "item \($0)" })
        let ours = edits(start, tag: "ours"), theirs = edits(start, tag: "theirs")
        let merged = TodoMerge(base: start, ours: ours, theirs: theirs).list
        let ids = merged.items.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0 < merged.nextID })
        let startIDs = Set(start.items.map(\.id))
        for added in ours.items.filter({ !startIDs.contains($0.id) }) + theirs.items.filter({ !startIDs.contains($0.id) }) {
            #expect(merged.items.contains { $0.title == added.title && $0.isDone == added.isDone }, "\(added.title) was lost")
        }
    }
}
