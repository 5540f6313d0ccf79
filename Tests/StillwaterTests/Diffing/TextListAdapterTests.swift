import StillwaterTesting
import Testing
@testable import Stillwater

@Suite("TextListAdapter")
struct TextListAdapterTests {
    struct Todo: Diffable, Equatable {
        var id: Int
        var title: String
        var done = false
        var diffIdentifier: Int { id }
    }

    /// A terminal stand-in: the rows it shows, changed only by the adapter's output.
    final class Screen {
        var rows: [String] = []
        var batches: [[TextRowChange]] = []
        func receive(_ changes: [TextRowChange]) {
            batches.append(changes)
            for change in changes {
                switch change {
                case .draw(let row, let text):
                    while rows.count <= row { rows.append("") }
                    rows[row] = text
                case .clear(let row):
                    rows[row] = ""
                }
            }
            while rows.last == "" { rows.removeLast() }
        }
    }

    func render(_ todo: Todo) -> String { "[\(todo.done ? "x" : " ")] \(todo.title)" }

    func make() -> (ListDataController<Todo, TextListAdapter<Todo>>, TextListAdapter<Todo>, Screen) {
        let screen = Screen()
        let adapter = TextListAdapter<Todo>(render: render, output: screen.receive)
        return (ListDataController(adapter: adapter), adapter, screen)
    }

    @Test("ticking one todo of 18 redraws one row")
    func oneOfEighteen() {
        let (controller, adapter, screen) = make()
        var todos = (0..<18).map { Todo(id: $0, title: "todo \($0)") }
        controller.update(items: todos)
        #expect(adapter.lastRedraw.description == "redrew 18 of 18 rows")
        todos[7].done = true
        controller.update(items: todos)
        #expect(adapter.lastRedraw.description == "redrew 1 of 18 rows")
        #expect(adapter.lastRedraw.renderedItems == 1)
        #expect(screen.batches.last == [.draw(row: 7, text: "[x] todo 7")])
        #expect(screen.rows == todos.map(render))
    }

    @Test("a shorter list clears the rows past its end")
    func clears() {
        let (controller, adapter, screen) = make()
        controller.update(items: [Todo(id: 1, title: "a"), Todo(id: 2, title: "b"), Todo(id: 3, title: "c")])
        controller.update(items: [Todo(id: 1, title: "a"), Todo(id: 2, title: "b")])
        #expect(screen.batches.last == [.clear(row: 2)])
        #expect(adapter.lastRedraw.description == "redrew 0 of 2 rows, cleared 1")
        #expect(adapter.lastRedraw.renderedItems == 0)
    }

    @Test("a change whose rendered text is the same redraws nothing and sends no output")
    func sameText() {
        let (controller, adapter, screen) = make()
        controller.update(items: [Todo(id: 1, title: "a")])
        controller.update(items: [Todo(id: 2, title: "a")])  // a different todo that renders the same
        #expect(screen.batches.count == 1)
        #expect(adapter.lastRedraw == RedrawSummary(redrawnRows: 0, clearedRows: 0, rowCount: 1, renderedItems: 1))
    }

    @Test("an update that changes nothing redraws nothing and says so")
    func nothingChanged() {
        let (controller, adapter, screen) = make()
        let todos = (0..<4).map { Todo(id: $0, title: "t\($0)") }
        controller.update(items: todos)
        controller.update(items: todos)
        #expect(adapter.lastRedraw.description == "redrew 0 of 4 rows")
        #expect(screen.batches.count == 1)
    }

    @Test("a full reload redraws every row")
    func reload() {
        let (controller, adapter, screen) = make()
        let todos = (0..<5).map { Todo(id: $0, title: "t\($0)") }
        controller.update(items: todos)
        controller.update(items: todos, mode: .fullReload)
        #expect(adapter.lastRedraw.description == "redrew 5 of 5 rows")
        #expect(screen.batches.last?.count == 5)
        #expect(adapter.lines == todos.map(render))
    }

    @Test("after any sequence of updates the screen shows the items, and only rows whose text changed were drawn",
          arguments: Array(UInt64(1)...10))
    func randomUpdates(seed: UInt64) {
        let (controller, adapter, screen) = make()
        var random = SeededRandom(seed: seed)
        for _ in 0..<25 {
            let before = screen.rows
            let todos = (0..<20).shuffled(using: &random).prefix(Int.random(in: 0...20, using: &random))
                .map { Todo(id: $0, title: "t\($0)", done: Bool.random(using: &random)) }
            let expected = todos.map(render)
            let changedRows = expected.indices.filter { $0 >= before.count || before[$0] != expected[$0] }.count
            controller.update(items: todos)
            #expect(screen.rows == expected)
            #expect(adapter.lines == expected)
            #expect(adapter.lastRedraw.redrawnRows == changedRows)
            #expect(adapter.lastRedraw.clearedRows == max(0, before.count - expected.count))
        }
    }
}
