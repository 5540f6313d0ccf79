import Foundation
import Stillwater
import Testing
@testable import TodoCore

/// The examples in TodoCore's documentation comments, run as written, with their "Prints" lines checked.
@Suite("TodoCore documentation examples")
struct DocExampleTests {
    @Test("TodoAction: an enum of actions reduced by a store")
    func todoAction() {
        let store = Store(TodoList(titles: ["milk", "eggs"]))
        store.dispatch(TodoAction.toggle(id: 2))
        store.dispatch(TodoAction.add("bread"))
        #expect("\(store.state.value.items.map { "\($0.title) \($0.isDone)" })" == #"["milk false", "eggs true", "bread false"]"#)
    }

    @Test("TodoRow: a row's text, and equality with handles")
    func todoRow() {
        let handles = RowHandles()
        let row = TodoRow(item: TodoItem(id: 7, title: "milk"), number: 1, isSelected: false, handles: handles)
        #expect(row.text == "   1. [ ] milk")
        #expect(row == TodoRow(item: row.item, number: 1, isSelected: false, handles: handles))
        #expect(row != TodoRow(item: row.item, number: 1, isSelected: false, handles: RowHandles()))
    }

    @Test("RowListView: a toggle of one of three rows writes one line")
    func rowListView() {
        var printed: [String] = []
        let handles = RowHandles()
        let view = RowListView { changes in printed.append("\(changes.count) lines to write") }
        let list = TodoList(titles: ["milk", "eggs", "tea"])
        view.show(TodoRow.rows(for: list.items, selectedIndex: nil, handles: handles))
        var toggled = list
        toggled.items[1].isDone = true
        view.show(TodoRow.rows(for: toggled.items, selectedIndex: nil, handles: handles))
        printed.append(view.lastRedraw.description)
        #expect(printed == ["3 lines to write", "1 lines to write", "redrew 1 of 3 rows"])
    }

    @Test("TodoSession: perform a command, read the rows")
    func todoSession() throws {
        let session = TodoSession(TodoList(titles: ["milk", "eggs"]))
        let outcome = try session.perform(.toggle(2))
        #expect("\(outcome)" == #"changed("item 2 \"eggs\" is done")"#)
        #expect(session.rows.value.map(\.text) == ["   1. [ ] milk", "   2. [x] eggs"])
    }

    @Test("TodoScreen: a key moves the cursor and the status line counts the rows")
    func todoScreen() {
        var written: [Int: String] = [:]
        let session = TodoSession(TodoList(titles: ["milk", "eggs"]), showsCursor: true)
        let screen = TodoScreen(session: session, width: 40, height: 8) { write in
            if case .line(let row, let line) = write { written[row] = line.text }
        }
        screen.handle(.down)
        #expect([written[1]!, written[2]!, written[6]!] == ["   1. [ ] milk", ">  2. [ ] eggs", "redrew 2 of 2 rows"])
    }

    @Test("TodoScreen.showNotice: a notice wrapped over the list area")
    func showNotice() {
        var rows: [Int: String] = [:]
        let screen = TodoScreen(session: TodoSession(showsCursor: true), width: 24, height: 8) { write in
            if case .line(let row, let line) = write { rows[row] = line.text }
        }
        screen.showNotice("/home/me/todo.json was set aside")
        #expect("\(rows[1]!) | \(rows[2]!) | \(rows[3]!)" == "Notice: | /home/me/todo.json was | set aside")
    }

    @Test("Keymap.helpLine: the hints that fit")
    func helpLine() {
        #expect(Keymap.helpLine(width: 30) == "? help  q quit  x done  a add")
        #expect("[\("牛乳".prefix(columns: 3))]" == "[牛 ]")
    }

    @Test("PipedRunner: changes, the list, and a refused number")
    func pipedRunner() {
        var printed: [String] = []
        let runner = PipedRunner(session: TodoSession(), output: { printed.append($0) }, errors: { printed.append("error: " + $0) })
        runner.run(lines: ["add milk", "toggle 1", "toggle 7"])
        #expect(printed == [
            "added \"milk\" as item 1", "   1. [ ] milk", "redrew 1 of 1 row · 1 of 1 left",
            "item 1 \"milk\" is done", "   1. [x] milk", "redrew 1 of 1 row · 0 of 1 left",
            "error: line 3: there is no item 7: the list shows only item 1",
        ])
    }

    @Test("PipedRunner, quiet: one line per command")
    func quietRunner() {
        var printed: [String] = []
        let runner = PipedRunner(session: TodoSession(), quiet: true, output: { printed.append($0) }, errors: { printed.append($0) })
        runner.run(lines: ["add milk", "done 1", "done 1"])
        #expect(printed == ["added \"milk\" as item 1", "item 1 \"milk\" is done", "item 1 \"milk\" is already done"])
    }

    @Test("KeyDecoder, LineEditor, TodoCommand, TodoOptions and Keymap examples")
    func smallExamples() throws {
        var decoder = KeyDecoder()
        #expect("\(decoder.feed(Array("a\u{1B}[A\u{1B}".utf8))) \(decoder.flush())" == "[a, Up] [Esc]")
        var editor = LineEditor(text: "mlk")
        for key: Key in [.left, .left, .character("i")] { _ = editor.handle(key) }
        #expect("\(editor.text) \(editor.cursor)" == "milk 2")
        #expect("\(try TodoCommand.parse("move 3 up")!)" == "move 3 up")
        let options = try TodoOptions.parse(["--file", "/tmp/list.json"])
        #expect("\(options.file ?? "default") \(options.showsHelp)" == "/tmp/list.json false")
        #expect(Keymap.command(for: .character(" ")) == .toggle)
        #expect(TodoItem.cleanTitle("  buy\tmilk\n") == "buy milk")
        #expect(TodoList(titles: ["milk", "eggs"]).items.map(\.id) == [1, 2])
        var milk = TodoItem(id: 1, title: "milk")
        milk.isDone = true
        #expect("\(milk.diffIdentifier) \(milk.isDone)" == "1 true")
    }

    @Test("TodoFile: save, then load")
    func todoFile() throws {
        let folder = TemporaryFolder()
        let file = TodoFile(path: folder.file("todo-example.json"))
        try file.save(TodoList(titles: ["milk"]))
        guard case .loaded(let list) = try file.load() else {
            Issue.record("expected the list to load")
            return
        }
        #expect(list.items.map(\.title) == ["milk"])
    }
}
