import Foundation
import Stillwater
import Testing
@testable import TodoCore

@Suite("TodoSession")
struct TodoSessionTests {
    @Test("row commands go through the row's handles into the store")
    func commandsChangeTheList() throws {
        let session = TodoSession(TodoList(titles: ["milk", "eggs", "tea"]))
        #expect(try session.perform(.toggle(2)) == .changed("item 2 \"eggs\" is done"))
        #expect(try session.perform(.edit(3, " green tea ")) == .changed("item 3 is now \"green tea\""))
        #expect(try session.perform(.move(3, .up)) == .changed("moved \"green tea\" up to item 2"))
        #expect(try session.perform(.delete(1)) == .changed("deleted item 1 \"milk\""))
        #expect(try session.perform(.add("bread")) == .changed("added \"bread\" as item 3"))
        #expect(session.shownTitles == ["green tea", "x eggs", "bread"])
    }

    @Test("a row's handle is the store's only way in: calling it without a command changes the list")
    func handlesAreRouted() {
        let session = TodoSession(TodoList(titles: ["milk", "eggs"]))
        let rows = session.rows.value
        rows[0].toggle()
        rows[1].move(.up)
        rows[0].rename(to: "oat milk")
        session.add("tea")
        let seen = session.history.entries.compactMap { if case .action(let action) = $0.step { action } else { nil } }
        #expect(seen == [.toggle(id: 1), .move(id: 2, direction: .up, filter: .all), .rename(id: 1, title: "oat milk"), .add("tea")])
        #expect(session.shownTitles == ["eggs", "x oat milk", "tea"])
    }

    @Test("rows hold the same handles in every version, so an unchanged row compares equal")
    func rowsStayEqual() {
        let session = TodoSession(TodoList(titles: ["milk", "eggs"]))
        let before = session.rows.value
        session.rows.value[1].toggle()
        let after = session.rows.value
        #expect(before[0] == after[0])
        #expect(before[1] != after[1])
        #expect(before[0].handles == after[1].handles)
    }

    @Test("a row made with other handles is not equal, though it shows the same text")
    func rowsWithOtherHandlesDiffer() {
        let item = TodoItem(id: 7, title: "milk")
        let handles = RowHandles()
        let row = TodoRow(item: item, number: 1, isSelected: false, handles: handles)
        #expect(row == TodoRow(item: item, number: 1, isSelected: false, handles: handles))
        #expect(row != TodoRow(item: item, number: 1, isSelected: false, handles: RowHandles()))
    }

    @Test("a number that is not on the list is refused and changes nothing", arguments: [
        TodoCommand.toggle(4), .edit(4, "x"), .delete(4), .move(4, .up), .toggle(99),
    ])
    func noSuchItem(command: TodoCommand) {
        let session = TodoSession(TodoList(titles: ["a", "b", "c"]))
        let before = session.list
        #expect(throws: CommandError.noSuchItem(number: command == .toggle(99) ? 99 : 4, rowCount: 3)) {
            try session.perform(command)
        }
        #expect(session.list == before)
        #expect(session.history.entries.isEmpty)
    }

    @Test("numbers count the rows the filter shows")
    func numbersFollowTheFilter() throws {
        let session = TodoSession(TodoList(titles: ["a", "b", "c"]))
        _ = try session.perform(.toggle(2))
        _ = try session.perform(.filter(.active))
        #expect(session.shownTitles == ["a", "c"])
        _ = try session.perform(.toggle(2))          // "c", the second active row
        #expect(session.list.items.map(\.isDone) == [false, true, true])
        #expect(throws: CommandError.noSuchItem(number: 2, rowCount: 1)) { try session.perform(.delete(2)) }
    }

    @Test("moving the first row up or the last one down is a note, not a change")
    func moveAtTheEnds() throws {
        let session = TodoSession(TodoList(titles: ["a", "b"]))
        #expect(try session.perform(.move(1, .up)) == .unchanged("item 1 is already at the top"))
        #expect(try session.perform(.move(2, .down)) == .unchanged("item 2 is already at the bottom"))
        #expect(session.history.entries.isEmpty)
    }

    @Test("undo and redo step through the changes; the filter is not undone")
    func undoRedo() throws {
        let session = TodoSession(TodoList(titles: ["a"]))
        #expect(try session.perform(.undo) == .unchanged("nothing to undo"))
        _ = try session.perform(.add("b"))
        _ = try session.perform(.toggle(1))
        _ = try session.perform(.filter(.done))
        #expect(try session.perform(.undo) == .changed("undid the last change"))
        #expect(session.filter.value == .done)
        #expect(session.list.items.map(\.isDone) == [false, false])
        _ = try session.perform(.undo)
        #expect(session.list.items.map(\.title) == ["a"])
        #expect(try session.perform(.undo) == .unchanged("nothing to undo"))
        _ = try session.perform(.redo)
        _ = try session.perform(.redo)
        #expect(session.list.items.map(\.isDone) == [true, false])
        #expect(try session.perform(.redo) == .unchanged("nothing to redo"))
    }

    @Test("a new change after an undo drops the redo")
    func changeDropsRedo() throws {
        let session = TodoSession(TodoList(titles: ["a"]))
        _ = try session.perform(.toggle(1))
        _ = try session.perform(.undo)
        _ = try session.perform(.add("b"))
        #expect(try session.perform(.redo) == .unchanged("nothing to redo"))
        #expect(session.list.items.map(\.isDone) == [false, false])
    }

    @Test("an add hidden by the filter says so")
    func hiddenAdd() throws {
        let session = TodoSession(TodoList(titles: ["a"]))
        _ = try session.perform(.filter(.done))
        #expect(try session.perform(.add("b")) == .changed("added \"b\" (hidden: showing done items)"))
        #expect(try session.perform(.filter(.all)) == .changed("showing all items"))
    }

    @Test("the cursor follows its item, and falls back to its row when the item goes")
    func cursor() throws {
        let session = TodoSession(TodoList(titles: ["a", "b", "c"]), showsCursor: true)
        #expect(session.rows.value.map(\.isSelected) == [true, false, false])
        session.selection.value = TodoSelection(id: 2, index: 1)
        _ = try session.perform(.move(2, .down))
        #expect(session.rows.value.map(\.item.title) == ["a", "c", "b"])
        #expect(session.rows.value.map(\.isSelected) == [false, false, true])
        _ = try session.perform(.delete(3))
        #expect(session.rows.value.map(\.isSelected) == [false, true])
    }

    @Test("toggling one of 18 rows redraws 1 of 18")
    func redrawCount() throws {
        let session = TodoSession(TodoList(titles: (1...18).map { "item \($0)" }))
        let view = RowListView { _ in }
        let showing = session.rows.observe { view.show($0) }
        #expect(view.lastRedraw.redrawnRows == 18)
        _ = try session.perform(.toggle(7))
        #expect(view.lastRedraw.description == "redrew 1 of 18 rows")
        _ = try session.perform(.move(7, .down))
        #expect(view.lastRedraw.description == "redrew 2 of 18 rows")
        _ = try session.perform(.list)
        // Listing changes nothing, so nothing is redrawn.
        #expect(view.showCount == 3)
        showing.cancel()
    }

    @Test("the rows are told once per change of the list, the filter or the cursor, and never when they stay the same")
    func rowsChangeOncePerChange() throws {
        let session = TodoSession(TodoList(titles: ["milk", "eggs"]), showsCursor: true)
        var told: [[String]] = []
        let observing = session.rows.observe { rows in told.append(rows.map(\.text)) }
        _ = try session.perform(.toggle(2))
        session.selection.value = TodoSelection(id: 2, index: 1)
        session.selection.value = TodoSelection(id: 2, index: 1)   // the same cursor: the rows stay
        session.filter.value = .all                                 // the same filter: the rows stay
        _ = try session.perform(.filter(.active))
        #expect(told == [
            [">  1. [ ] milk", "   2. [ ] eggs"],
            [">  1. [ ] milk", "   2. [x] eggs"],
            ["   1. [ ] milk", ">  2. [x] eggs"],
            [">  1. [ ] milk"],
        ])
        #expect(session.rows.value.map(\.text) == told.last)
        observing.cancel()
    }

    @Test("with a file, every change is saved, and a failed save is reported")
    func autosave() throws {
        let folder = TemporaryFolder()
        let file = TodoFile(path: folder.file("list.json"))
        let session = TodoSession(TodoList(), file: file)
        _ = try session.perform(.add("milk"))
        #expect(try file.load() == .loaded(TodoList(titles: ["milk"])))
        _ = try session.perform(.filter(.done))       // view state: not saved, nothing written
        _ = try session.perform(.undo)
        #expect(try file.load() == .loaded(TodoList(items: [], nextID: 1)))
        #expect(session.saveProblem.value == nil)

        try FileManager.default.removeItem(atPath: folder.path)
        _ = try session.perform(.add("eggs"))
        #expect(session.saveProblem.value == "not saved: \(TodoFileError.folderMissing(path: file.path, folder: folder.path))")
        #expect(session.hasUnsavedChanges)
    }
}

