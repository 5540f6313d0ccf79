import Testing
@testable import Stillwater

/// The examples in the diffing doc comments, with `print` replaced by a log, so the docs stay true.
@Suite("Diffing doc examples")
struct DiffingDocExampleTests {
    @Test("Diffable: a changed element with the same identity is an update")
    func diffable() {
        struct Todo: Diffable, Equatable {
            let id: Int
            var title: String
            var diffIdentifier: Int { id }
        }
        let changeset = Changeset(from: [Todo(id: 1, title: "Milk")], to: [Todo(id: 1, title: "Oat milk")])
        #expect("\(changeset)" == "Changeset(updates: [0])")
    }

    @Test("Changeset: moves and updates of the doc's rows, and isEqual that ignores content")
    func changeset() {
        struct Row: Diffable, Equatable { var id: String; var count: Int; var diffIdentifier: String { id } }
        let old = [Row(id: "a", count: 1), Row(id: "b", count: 1)]
        let new = [Row(id: "b", count: 1), Row(id: "a", count: 2)]
        #expect("\(Changeset(from: old, to: new))" == "Changeset(moves: [1 -> 0], updates: [0])")
        #expect("\(Changeset(from: ["a", "b"], to: ["b", "a"], isEqual: { _, _ in true }).moves)" == "[1 -> 0]")
    }

    @Test("applying and apply give the lists the docs show")
    func applying() {
        let old = ["a", "b", "c"]
        let new = ["c", "a", "d"]
        #expect(old.applying(Changeset(from: old, to: new)) { new[$0] } == ["c", "a", "d"])
        var lines = ["milk", "eggs"]
        lines.apply(Changeset(deletes: [0], inserts: [1])) { _ in "bread" }
        #expect(lines == ["eggs", "bread"])
    }

    @Test("applying a sectioned changeset moves the item across sections")
    func sectionedApplying() {
        let old = [ListSection("Today", items: ["milk", "eggs"]), ListSection("Later", items: ["bread"])]
        let new = [ListSection("Today", items: ["milk"]), ListSection("Later", items: ["eggs", "bread"])]
        let changeset = SectionedChangeset(from: old, to: new)
        let result = old.applying(changeset, newSection: { new[$0] }, newItem: { new[$0.section].items[$0.item] })
        #expect(result.map(\.items) == [["milk"], ["eggs", "bread"]])
    }

    @Test("diffed sends an insert-everything changeset, then the difference")
    func diffed() {
        var log: [String] = []
        let lists = PublishSubject<[String]>()
        let subscription = lists.diffed().observe { log.append("\($0.changeset)") }
        lists.send(["a", "b"])
        lists.send(["b", "c"])
        #expect(log == ["Changeset(inserts: [0, 1])", "Changeset(deletes: [0], inserts: [1])"])
        withExtendedLifetime(subscription) {}
    }

    @Test("SectionDataController with a text adapter redraws the one changed row")
    func controller() {
        let adapter = TextListAdapter<String>(render: { "- \($0)" }, output: { _ in })
        let controller = SectionDataController(adapter: adapter)
        controller.update(items: ["milk", "eggs", "bread"])
        controller.update(items: ["milk", "oat milk", "bread"])
        #expect("\(adapter.lastRedraw)" == "redrew 1 of 3 rows")
    }

    @Test("TextListAdapter draws each row once, then only the row that changed")
    func textAdapter() {
        var log: [String] = []
        let adapter = TextListAdapter<String>(render: { "[ ] \($0)" }, output: { changes in
            for case .draw(let row, let text) in changes { log.append("\(row) \(text)") }
        })
        let controller = SectionDataController(adapter: adapter)
        controller.update(items: ["milk", "eggs"])
        controller.update(items: ["milk", "bread"])
        log.append("\(adapter.lastRedraw)")
        #expect(log == ["0 [ ] milk", "1 [ ] eggs", "1 [ ] bread", "redrew 1 of 2 rows"])
    }
}
