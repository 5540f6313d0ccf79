import Stillwater
import Testing
@testable import TodoCore

@Suite("TodoItem and TodoList")
struct TodoListTests {
    @Test("a title loses control characters and outer whitespace", arguments: [
        ("  milk  ", "milk"),
        ("buy\tmilk\n", "buy milk"),
        ("\u{1B}[2Jmilk", "[2Jmilk"),
        ("\n\t ", ""),
        ("café ☕️", "café ☕️"),
    ])
    func cleanTitle(input: String, expected: String) {
        #expect(TodoItem.cleanTitle(input) == expected)
    }

    @Test("nextID is raised past the largest identity")
    func nextIDIsRaised() {
        #expect(TodoList().nextID == 1)
        #expect(TodoList(items: [TodoItem(id: 7, title: "a")]).nextID == 8)
        #expect(TodoList(items: [TodoItem(id: 7, title: "a")], nextID: 3).nextID == 8)
        #expect(TodoList(items: [TodoItem(id: 7, title: "a")], nextID: 20).nextID == 20)
    }

    @Test("filters show all, the active or the done items, and cycle in that order")
    func filters() {
        var list = TodoList(titles: ["a", "b", "c"])
        list.items[1].isDone = true
        #expect(list.items(shownBy: .all).map(\.title) == ["a", "b", "c"])
        #expect(list.items(shownBy: .active).map(\.title) == ["a", "c"])
        #expect(list.items(shownBy: .done).map(\.title) == ["b"])
        #expect(list.remaining == 2)
        #expect([TodoFilter.all.next, TodoFilter.active.next, TodoFilter.done.next] == [.active, .done, .all])
    }
}

@Suite("TodoAction")
struct TodoActionTests {
    func reduced(_ list: TodoList, _ actions: TodoAction...) -> TodoList {
        var list = list
        for action in actions { action.reduce(&list) }
        return list
    }

    @Test("add appends a cleaned title with the next identity")
    func add() {
        let list = reduced(TodoList(titles: ["milk"]), .add("  eggs\n"), .add("tea"))
        #expect(list.items.map(\.title) == ["milk", "eggs", "tea"])
        #expect(list.items.map(\.id) == [1, 2, 3])
        #expect(list.nextID == 4)
    }

    @Test("add with a title that cleans to nothing adds nothing")
    func addEmpty() {
        let list = TodoList(titles: ["milk"])
        #expect(reduced(list, .add(" \t\n")) == list)
    }

    @Test("an identity is never reused after a delete")
    func identitiesAreNotReused() {
        let list = reduced(TodoList(titles: ["a", "b"]), .delete(id: 2), .add("c"))
        #expect(list.items.map(\.id) == [1, 3])
    }

    @Test("toggle, rename and delete change only the named item")
    func changeOne() {
        let list = reduced(TodoList(titles: ["a", "b", "c"]), .toggle(id: 2), .rename(id: 3, title: "C"), .delete(id: 1))
        #expect(list.items == [TodoItem(id: 2, title: "b", isDone: true), TodoItem(id: 3, title: "C")])
    }

    @Test("rename to an empty title changes nothing")
    func renameEmpty() {
        let list = TodoList(titles: ["a"])
        #expect(reduced(list, .rename(id: 1, title: "  ")) == list)
    }

    @Test("an action naming an identity that is not on the list changes nothing", arguments: [
        TodoAction.toggle(id: 9), .rename(id: 9, title: "x"), .delete(id: 9), .move(id: 9, direction: .up, filter: .all),
    ])
    func unknownIdentity(action: TodoAction) {
        let list = TodoList(titles: ["a", "b"])
        #expect(reduced(list, action) == list)
    }

    @Test("move swaps an item with its neighbour, and stays at the ends")
    func move() {
        let list = TodoList(titles: ["a", "b", "c"])
        #expect(reduced(list, .move(id: 3, direction: .up, filter: .all)).items.map(\.title) == ["a", "c", "b"])
        #expect(reduced(list, .move(id: 1, direction: .down, filter: .all)).items.map(\.title) == ["b", "a", "c"])
        #expect(reduced(list, .move(id: 1, direction: .up, filter: .all)) == list)
        #expect(reduced(list, .move(id: 3, direction: .down, filter: .all)) == list)
    }

    @Test("move under a filter jumps over the hidden items to the next shown one")
    func moveFiltered() {
        // a, b (done), c: under "active", c moving up passes a, not only b.
        let list = reduced(TodoList(titles: ["a", "b", "c"]), .toggle(id: 2))
        let moved = reduced(list, .move(id: 3, direction: .up, filter: .active))
        #expect(moved.items.map(\.title) == ["c", "a", "b"])
        #expect(moved.items(shownBy: .active).map(\.title) == ["c", "a"])
        let down = reduced(list, .move(id: 1, direction: .down, filter: .active))
        #expect(down.items.map(\.title) == ["b", "c", "a"])
    }

    @Test("actions round-trip through JSON, so a history can be exported")
    func codable() throws {
        let history = History<TodoAction>()
        let store = Store(TodoList(), middleware: [history.middleware])
        store.dispatch(TodoAction.add("milk"))
        store.dispatch(TodoAction.move(id: 1, direction: .down, filter: .done))
        let entries = try History<TodoAction>.entries(fromJSON: history.exportJSON())
        #expect(entries.map(\.step) == [.action(.add("milk")), .action(.move(id: 1, direction: .down, filter: .done))])
    }
}
