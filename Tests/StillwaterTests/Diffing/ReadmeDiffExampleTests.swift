import Testing
@testable import Stillwater

/// The README's diffing examples, with `print` replaced by a log, so the README stays true.
@Suite("README diffing example")
struct ReadmeDiffExampleTests {
    struct Todo: Diffable, Equatable {
        let id: Int
        var title: String
        var done = false
        var diffIdentifier: Int { id }
    }

    let old = [Todo(id: 1, title: "milk"), Todo(id: 2, title: "eggs"),
               Todo(id: 3, title: "bread"), Todo(id: 4, title: "tea")]
    let new = [Todo(id: 3, title: "bread"), Todo(id: 1, title: "milk", done: true),
               Todo(id: 4, title: "tea"), Todo(id: 5, title: "jam")]

    @Test("the changeset of two small lists reads as the README says")
    func changeset() {
        var log: [String] = []
        let changeset = Changeset(from: old, to: new)
        log.append("\(changeset)")
        log.append("\(old.applying(changeset) { new[$0] } == new)")
        #expect(log == ["Changeset(deletes: [1], inserts: [3], moves: [2 -> 0], updates: [0])", "true"])
    }

    @Test("diffed() sends the changesets the README shows")
    func diffed() {
        var log: [String] = []
        let todos = BehaviorRelay<[Todo]>(old)
        let subscription = todos.diffed().observe { log.append("\($0.changeset)") }
        todos.accept(new)
        #expect(log == ["Changeset(inserts: [0, 1, 2, 3])",
                        "Changeset(deletes: [1], inserts: [3], moves: [2 -> 0], updates: [0])"])
        withExtendedLifetime(subscription) {}
    }

    @Test("the text adapter redraws what the README says")
    func textList() {
        var log: [String] = []
        let adapter = TextListAdapter<Todo>(
            render: { "[\($0.done ? "x" : " ")] \($0.title)" },
            output: { changes in
                for case .draw(let row, let text) in changes { log.append("row \(row): \(text)") }
            }
        )
        let list = SectionDataController(adapter: adapter)
        list.update(items: old)
        list.update(items: new)
        var ticked = new
        ticked[3].done = true
        log.removeAll()
        list.update(items: ticked)
        log.append("\(adapter.lastRedraw)")
        #expect(log == ["row 3: [x] jam", "redrew 1 of 4 rows"])
    }
}
