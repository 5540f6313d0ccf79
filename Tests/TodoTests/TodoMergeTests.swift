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
        #expect(merge.conflicts == ["\"brown eggs\": ticked here and renamed in another window, both kept"])
    }

    // One test per pair of concurrent changes, as the README's merge table lists them. "Here" is ours
    // (the later save), "another window" is theirs.

    /// The merge of `ours` and `theirs`, each applied to ``base``.
    func merge(ours: [TodoAction], theirs: [TodoAction], base: TodoList? = nil) -> TodoMerge {
        let base = base ?? self.base
        var mine = base, other = base
        for action in ours { action.reduce(&mine) }
        for action in theirs { action.reduce(&other) }
        return TodoMerge(base: base, ours: mine, theirs: other)
    }

    let four = TodoList(titles: ["milk", "eggs", "tea", "jam"])

    @Test("delete vs delete: the item is gone, and the note says both deleted it")
    func deleteDelete() {
        let merge = merge(ours: [.delete(id: 2)], theirs: [.delete(id: 2), .toggle(id: 1)])
        #expect(summary(merge.list) == ["1 milk x", "3 tea"])
        #expect(merge.conflicts == ["\"eggs\" was deleted in both windows"])
    }

    @Test("delete here vs rename there: the delete wins, and the note names the rename")
    func deleteRename() {
        let merge = merge(ours: [.delete(id: 1)], theirs: [.rename(id: 1, title: "oat milk")])
        #expect(summary(merge.list) == ["2 eggs", "3 tea"])
        #expect(merge.conflicts == ["\"milk\" stays deleted (renamed to \"oat milk\" in another window)"])
    }

    @Test("rename here vs delete there: the delete wins, and the note names the dropped rename")
    func renameDelete() {
        let merge = merge(ours: [.rename(id: 1, title: "oat milk")], theirs: [.delete(id: 1)])
        #expect(summary(merge.list) == ["2 eggs", "3 tea"])
        #expect(merge.conflicts == ["\"milk\" was deleted in another window and stays deleted (renamed to \"oat milk\" here)"])
    }

    @Test("delete here vs tick there: the item stays deleted, not back and ticked")
    func deleteTick() {
        let merge = merge(ours: [.delete(id: 1)], theirs: [.toggle(id: 1)])
        #expect(summary(merge.list) == ["2 eggs", "3 tea"])
        #expect(merge.conflicts == ["\"milk\" stays deleted (ticked in another window)"])
    }

    @Test("tick here vs delete there: the delete wins, and the note names the dropped tick")
    func tickDelete() {
        let merge = merge(ours: [.toggle(id: 1)], theirs: [.delete(id: 1)])
        #expect(summary(merge.list) == ["2 eggs", "3 tea"])
        #expect(merge.conflicts == ["\"milk\" was deleted in another window and stays deleted (ticked here)"])
    }

    @Test("delete vs move, either way round: the delete wins, and the note names the move")
    func deleteMove() {
        let there = merge(ours: [.delete(id: 3)], theirs: [.move(id: 3, direction: .up, filter: .all)])
        #expect(summary(there.list) == ["1 milk", "2 eggs"])
        #expect(there.conflicts == ["\"tea\" stays deleted (moved in another window)"])
        let here = merge(ours: [.move(id: 3, direction: .up, filter: .all)], theirs: [.delete(id: 3)])
        #expect(summary(here.list) == ["1 milk", "2 eggs"])
        #expect(here.conflicts == ["\"tea\" was deleted in another window and stays deleted (moved here)"])
    }

    @Test("rename vs rename: the later rename (this window's) wins, and the note gives the other")
    func renameRename() {
        let merge = merge(ours: [.rename(id: 1, title: "oat milk")], theirs: [.rename(id: 1, title: "soy milk")])
        #expect(summary(merge.list) == ["1 oat milk", "2 eggs", "3 tea"])
        #expect(merge.conflicts == [
            "\"oat milk\": renamed in both windows; kept the later rename, made here (another window's was \"soy milk\")",
        ])
        let same = self.merge(ours: [.rename(id: 1, title: "oat milk")], theirs: [.rename(id: 1, title: "oat milk"), .toggle(id: 3)])
        #expect(summary(same.list) == ["1 oat milk", "2 eggs", "3 tea x"])
        #expect(same.conflicts == ["\"oat milk\": renamed the same in both windows"])
    }

    @Test("tick vs tick: ticked once, not toggled back")
    func tickTick() {
        let merge = merge(ours: [.toggle(id: 1)], theirs: [.toggle(id: 1), .toggle(id: 3)])
        #expect(summary(merge.list) == ["1 milk x", "2 eggs", "3 tea x"])
        #expect(merge.conflicts == ["\"milk\": ticked in both windows"])
        var done = base
        TodoAction.toggle(id: 1).reduce(&done)
        let untick = self.merge(ours: [.toggle(id: 1)], theirs: [.toggle(id: 1), .toggle(id: 2)], base: done)
        #expect(summary(untick.list) == ["1 milk", "2 eggs x", "3 tea"])
        #expect(untick.conflicts == ["\"milk\": unticked in both windows"])
    }

    @Test("rename vs tick: both kept, and the note says so")
    func renameTick() {
        let merge = merge(ours: [.rename(id: 2, title: "brown eggs")], theirs: [.toggle(id: 2)])
        #expect(summary(merge.list) == ["1 milk", "2 brown eggs x", "3 tea"])
        #expect(merge.conflicts == ["\"brown eggs\": renamed here and ticked in another window, both kept"])
    }

    @Test("move vs rename: the item is renamed in its new place")
    func moveRename() {
        let merge = merge(ours: [.move(id: 3, direction: .up, filter: .all)], theirs: [.rename(id: 3, title: "green tea")])
        #expect(summary(merge.list) == ["1 milk", "3 green tea", "2 eggs"])
        #expect(merge.conflicts == ["\"green tea\": moved here and renamed in another window, both kept"])
    }

    @Test("tick vs move: the item is ticked in its new place")
    func tickMove() {
        let merge = merge(ours: [.toggle(id: 3)], theirs: [.move(id: 3, direction: .up, filter: .all)])
        #expect(summary(merge.list) == ["1 milk", "3 tea x", "2 eggs"])
        #expect(merge.conflicts == ["\"tea\": ticked here and moved in another window, both kept"])
    }

    @Test("move vs move of one item: the later place (this window's) wins")
    func moveSameItem() {
        let merge = merge(
            ours: [.move(id: 4, direction: .up, filter: .all)],
            theirs: [.move(id: 4, direction: .up, filter: .all), .move(id: 4, direction: .up, filter: .all)], base: four)
        #expect(summary(merge.list) == ["1 milk", "2 eggs", "4 jam", "3 tea"])
        #expect(merge.conflicts == ["\"jam\": moved in both windows; kept the later place, made here"])
    }

    @Test("move vs move of different items: both moves are kept, nothing to report")
    func moveOtherItems() {
        let five = TodoList(titles: ["a", "b", "c", "d", "e"])
        let merge = merge(ours: [.move(id: 5, direction: .up, filter: .all)], theirs: [.move(id: 2, direction: .up, filter: .all)], base: five)
        #expect(summary(merge.list) == ["2 b", "1 a", "3 c", "5 e", "4 d"])
        #expect(merge.conflicts.isEmpty)
    }

    @Test("add vs add of the same title: both kept, and the note says so")
    func addSameTitle() {
        let merge = merge(ours: [.add("bread")], theirs: [.add("bread"), .toggle(id: 1)])
        #expect(summary(merge.list) == ["1 milk x", "2 eggs", "3 tea", "4 bread", "5 bread"])
        #expect(merge.conflicts == ["\"bread\" was added in both windows; both are kept"])
        #expect(merge.renumbered == [4: 5])
    }

    @Test("add vs delete or move of the item before it: the new item stays at the end")
    func addNextToChange() {
        let deleted = merge(ours: [.add("jam")], theirs: [.delete(id: 3)])
        #expect(summary(deleted.list) == ["1 milk", "2 eggs", "4 jam"])
        #expect(deleted.conflicts.isEmpty)
        let moved = merge(ours: [.add("jam")], theirs: [.move(id: 3, direction: .up, filter: .all)])
        #expect(summary(moved.list) == ["1 milk", "3 tea", "2 eggs", "4 jam"])
        #expect(moved.conflicts.isEmpty)
        let movedHere = merge(ours: [.move(id: 3, direction: .up, filter: .all)], theirs: [.add("jam")])
        #expect(summary(movedHere.list) == ["1 milk", "3 tea", "2 eggs", "4 jam"])
    }

    @Test("another program's fields of one item changed on both sides: the later (this window's) wins")
    func otherFieldsBoth() {
        var ours = base, theirs = base
        ours.items[0].otherFields["priority"] = .string("high")
        theirs.items[0].otherFields["priority"] = .string("low")
        theirs.items[0].isDone = true
        let merge = TodoMerge(base: base, ours: ours, theirs: theirs)
        #expect(merge.list.items[0].otherFields == ["priority": .string("high")])
        #expect(merge.list.items[0].isDone)
        #expect(merge.conflicts == ["\"milk\": its other fields changed in both windows; kept the later ones, made here; also ticked in another window"])
    }

    @Test("a delete with nothing done to the item elsewhere: gone, nothing to report")
    func deleteUntouched() {
        let merge = merge(ours: [.delete(id: 2)], theirs: [.toggle(id: 1)])
        #expect(summary(merge.list) == ["1 milk x", "3 tea"])
        #expect(merge.conflicts.isEmpty)
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

    @Test("random edits on both sides: nothing added is lost, nothing deleted comes back, the later rename wins, identities stay unique",
          arguments: 0..<40)
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
        for item in start.items {
            let mine = ours.items.first { $0.id == item.id }, other = theirs.items.first { $0.id == item.id }
            let result = merged.items.first { $0.id == item.id }
            guard let mine, let other else {
                #expect(result == nil, "\(item.title), deleted on one side, came back")
                continue
            }
            #expect(result?.title == (mine.title != item.title ? mine.title : other.title), "the later rename wins")
            #expect(result?.isDone == (mine.isDone != item.isDone ? mine.isDone : other.isDone))
        }
    }
}
