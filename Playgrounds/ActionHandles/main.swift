// Why action handles: the same todo screen built twice, once handing callbacks down as closures and once
// as ActionHandles, driven through the same 100 updates. Every component sits behind a RenderGate, so it
// renders only when its inputs changed; the table shows how often that is.
//
//     swift run action-handles

import Stillwater

// MARK: The app: a store of todos and a clock

struct Todo: Equatable {
    let id: Int
    let title: String
    var isDone = false
}

struct AppState: Equatable {
    var todos = ["Milk", "Eggs", "Bread", "Tea", "Rice"].enumerated().map { Todo(id: $0.offset, title: $0.element) }
    var clock = 0
    var remaining: Int { todos.count { !$0.isDone } }
}

enum AppAction: Action {
    case toggle(Int)
    case clearDone
    case tick

    func reduce(_ state: inout AppState) {
        switch self {
        case .toggle(let id): state.todos[id].isDone.toggle()
        case .clearDone: for index in state.todos.indices { state.todos[index].isDone = false }
        case .tick: state.clock += 1
        }
    }
}

// MARK: What the components read

/// Counts renders per component, in the order the components first rendered.
final class RenderCounts {
    private(set) var names: [String] = []
    private(set) var counts: [String: Int] = [:]

    func record(_ name: String) {
        if counts[name] == nil { names.append(name) }
        counts[name, default: 0] += 1
    }
}

/// A component: a name and a gate in front of its (here, invisible) output.
final class Component<Props: Equatable> {
    private let gate: RenderGate<Props>

    init(_ name: String, counts: RenderCounts) {
        gate = RenderGate { _ in counts.record(name) }
    }

    func update(_ props: Props) { gate.update(props) }
    var props: Props { gate.lastRendered! }
}

/// A component whose props hold a closure: they cannot be `Equatable`, so no gate can tell whether they
/// changed, and it must render every time its parent does.
final class UngatedComponent<Props> {
    private let name: String
    private let counts: RenderCounts
    private(set) var props: Props?

    init(_ name: String, counts: RenderCounts) {
        self.name = name
        self.counts = counts
    }

    func update(_ props: Props) {
        self.props = props
        counts.record(name)
    }
}

/// The rows find their toggle callback in the context (the environment), the footer gets its clear
/// callback as a prop: the two ways a callback reaches a child.
enum OnToggleHandleKey: ContextKey {
    static let defaultValue = ActionHandle<Int>()
}

enum OnToggleClosureKey: ContextKey {
    static let defaultValue: @Sendable (Int) -> Void = { _ in }
}

struct RowProps: Equatable {
    var todo: Todo
    var context: ComponentContext
}

struct HeaderProps: Equatable { var remaining: Int }
struct ClockProps: Equatable { var clock: Int }
struct HandleFooterProps: Equatable {
    var label: String
    var onClear: ActionHandle<Void>
}
struct ClosureFooterProps {
    var label: String
    var onClear: () -> Void
}

/// The parts both screens share: the store, the app's own render, a header, a clock and a row per todo.
/// `renderChildren` is where the two screens differ: how they hand callbacks down.
class Screen {
    let store = Store(AppState())
    let counts = RenderCounts()
    let header: Component<HeaderProps>
    let clock: Component<ClockProps>
    let rows: [Component<RowProps>]
    private var subscription: Subscription?

    init() {
        header = Component("Header", counts: counts)
        clock = Component("Clock", counts: counts)
        rows = AppState().todos.map { Component("Row \($0.title)", counts: counts) }
    }

    /// Renders the screen now and on every new state.
    func start() {
        subscription = store.observe { [unowned self] state in
            counts.record("Screen")
            header.update(HeaderProps(remaining: state.remaining))
            let context = childContext()
            for (row, todo) in zip(rows, state.todos) { row.update(RowProps(todo: todo, context: context)) }
            clock.update(ClockProps(clock: state.clock))
            renderFooter()
        }
    }

    func childContext() -> ComponentContext { ComponentContext() }
    func renderFooter() {}
    /// What a tap on row `index` does: it calls the callback the row received.
    func tapRow(_ index: Int) {}
}

/// Callbacks as closures: the parent makes new ones each time it renders.
final class ClosureScreen: Screen {
    lazy var footer = UngatedComponent<ClosureFooterProps>("Footer", counts: counts)

    override func childContext() -> ComponentContext {
        let store = self.store
        return ComponentContext().setting(OnToggleClosureKey.self, to: { id in store.dispatch(AppAction.toggle(id)) })
    }

    override func renderFooter() {
        let store = self.store
        footer.update(ClosureFooterProps(label: "Clear done") { store.dispatch(AppAction.clearDone) })
    }

    override func tapRow(_ index: Int) {
        let row = rows[index].props
        row.context[OnToggleClosureKey.self](row.todo.id)
    }
}

/// Callbacks as handles: made once, routed into the store once, handed down unchanged on every render.
final class HandleScreen: Screen {
    let onToggle = ActionHandle<Int>()
    let onClear = ActionHandle<Void>()
    lazy var footer = Component<HandleFooterProps>("Footer", counts: counts)
    private var routes: [Subscription] = []

    override init() {
        super.init()
        routes = [
            onToggle.map { AppAction.toggle($0) }.bind(to: store),
            onClear.dispatch(to: store) { AppAction.clearDone },
        ]
    }

    override func childContext() -> ComponentContext {
        ComponentContext().setting(OnToggleHandleKey.self, to: onToggle)
    }

    override func renderFooter() {
        footer.update(HandleFooterProps(label: "Clear done", onClear: onClear))
    }

    override func tapRow(_ index: Int) {
        let row = rows[index].props
        row.context[OnToggleHandleKey.self](row.todo.id)
    }
}

// MARK: The same 100 updates through both

/// Update `step`: an even step taps a row (each of the five rows in turn), an odd step ticks the clock.
func drive(_ screen: Screen) {
    screen.start()
    for step in 0..<100 {
        if step.isMultiple(of: 2) {
            screen.tapRow(step / 2 % screen.rows.count)
        } else {
            screen.store.dispatch(AppAction.tick)
        }
    }
}

let closures = ClosureScreen()
let handles = HandleScreen()
drive(closures)
drive(handles)

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return right ? fill + text : text + fill
}

let reads: [String: String] = [
    "Screen": "the whole state",
    "Header": "remaining count",
    "Clock": "clock",
    "Footer": "label, onClear (a prop)",
]
print("Renders per component over 100 updates (50 row taps, 50 clock ticks), plus the first render:")
print()
print(pad("component", 12) + pad("reads", 34) + pad("closures", 10, right: true) + pad("handles", 10, right: true))
print(String(repeating: "-", count: 66))
for name in closures.counts.names {
    let read = reads[name] ?? "its todo, onToggle (in the context)"
    let withClosures = closures.counts.counts[name] ?? 0
    let withHandles = handles.counts.counts[name] ?? 0
    print(pad(name, 12) + pad(read, 34) + pad("\(withClosures)", 10, right: true) + pad("\(withHandles)", 10, right: true))
}
print(String(repeating: "-", count: 66))
let totalClosures = closures.counts.counts.values.reduce(0, +)
let totalHandles = handles.counts.counts.values.reduce(0, +)
print(pad("total", 46) + pad("\(totalClosures)", 10, right: true) + pad("\(totalHandles)", 10, right: true))
print()
print("Both screens end in the same state: \(closures.store.state.value == handles.store.state.value)")
print("""
With closures, every render of the screen makes new callbacks. A closure cannot be compared, so the rows
(whose context holds one) and the footer (whose props hold one) look changed every time and render with
every update. With handles, the callbacks keep their identity: a row renders only when its own todo
changed, and the footer renders once.
""")
