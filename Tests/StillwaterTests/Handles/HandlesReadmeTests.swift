import Testing
@testable import Stillwater

private struct Todos {
    var done: Set<Int> = []
}

private enum TodoAction: Action {
    case toggle(Int)

    func reduce(_ state: inout Todos) {
        if case .toggle(let id) = self, state.done.remove(id) == nil { state.done.insert(id) }
    }
}

private struct RowProps: Equatable {
    var title: String
    var onToggle: ActionHandle<Int>
}

@Suite("Handles README example")
struct HandlesReadmeTests {
    @Test("the README's after example renders once, and the row's call reaches the store")
    func readmeAfterExample() {
        let printed = Shared<[String]>([])
        let store = Store(Todos())
        let onToggle = ActionHandle<Int>()
        let routing = onToggle.map { TodoAction.toggle($0) }.bind(to: store)

        let row = RenderGate<RowProps> { printed.value.append("render \($0.title)") }
        for _ in 1...3 { row.update(RowProps(title: "Milk", onToggle: onToggle)) }
        row.lastRendered?.onToggle(1)
        printed.value.append("\(row.renderCount) \(store.state.value.done)")

        #expect(printed.value == ["render Milk", "1 [1]"])
        withExtendedLifetime(routing) {}
    }
}
