// Why action handles: the same todo screen built twice, once handing callbacks down as closures and once
// as ActionHandles, driven through the same 100 updates. Every component whose inputs can be compared sits
// behind a RenderGate, so it renders only when its inputs changed; the table shows how often that is.
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

/// How a parent hands callbacks to its children.
enum CallbackStyle {
    /// New closures made in each render, as a view's body makes them.
    case closures
    /// Handles made once, routed into the store once, and handed down unchanged in every render.
    case handles
}

/// A todo screen: the screen itself, a header, a row per todo, a clock and a footer, each behind a gate
/// (or, for props that hold a closure, without one, since they cannot be compared).
final class Screen {
    let style: CallbackStyle
    let store = Store(AppState())
    let counts = RenderCounts()
    let header: Component<HeaderProps>
    let rows: [Component<RowProps>]
    let clock: Component<ClockProps>
    let closureFooter: UngatedComponent<ClosureFooterProps>
    let handleFooter: Component<HandleFooterProps>
    let onToggle = ActionHandle<Int>()
    let onClear = ActionHandle<Void>()
    private var subscriptions: [Subscription] = []

    init(_ style: CallbackStyle) {
        self.style = style
        let counts = self.counts
        header = Component("Header", counts: counts)
        rows = AppState().todos.map { Component("Row \($0.title)", counts: counts) }
        clock = Component("Clock", counts: counts)
        closureFooter = UngatedComponent("Footer", counts: counts)
        handleFooter = Component("Footer", counts: counts)
        if style == .handles {
            subscriptions = [
                onToggle.map { AppAction.toggle($0) }.bind(to: store),
                onClear.map { AppAction.clearDone }.bind(to: store),
            ]
        }
        subscriptions.append(store.observe { [unowned self] state in render(state) })
    }

    /// The screen's render: it rebuilds every child's props and offers them to the child.
    func render(_ state: AppState) {
        counts.record("Screen")
        header.update(HeaderProps(remaining: state.remaining))
        let context: ComponentContext
        switch style {
        case .closures:
            context = ComponentContext().setting(OnToggleClosureKey.self, to: { [store] id in
                store.dispatch(AppAction.toggle(id))
            })
        case .handles:
            context = ComponentContext().setting(OnToggleHandleKey.self, to: onToggle)
        }
        for (row, todo) in zip(rows, state.todos) { row.update(RowProps(todo: todo, context: context)) }
        clock.update(ClockProps(clock: state.clock))
        switch style {
        case .closures:
            closureFooter.update(ClosureFooterProps(label: "Clear done") { [store] in store.dispatch(AppAction.clearDone) })
        case .handles:
            handleFooter.update(HandleFooterProps(label: "Clear done", onClear: onClear))
        }
    }

    /// A tap on row `index`: the row calls the callback it found in its context.
    func tapRow(_ index: Int) {
        let props = rows[index].props
        switch style {
        case .closures: props.context[OnToggleClosureKey.self](props.todo.id)
        case .handles: props.context[OnToggleHandleKey.self](props.todo.id)
        }
    }
}

// MARK: The same 100 updates through both

/// Update `step`: an even step taps a row (each of the five rows in turn), an odd step ticks the clock.
func drive(_ screen: Screen) {
    for step in 0..<100 {
        if step.isMultiple(of: 2) {
            screen.tapRow(step / 2 % screen.rows.count)
        } else {
            screen.store.dispatch(AppAction.tick)
        }
    }
}

let closures = Screen(.closures)
let handles = Screen(.handles)
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
print(pad("component", 12) + pad("reads", 38) + pad("closures", 10, right: true) + pad("handles", 10, right: true))
print(String(repeating: "-", count: 70))
for name in closures.counts.names {
    let read = reads[name] ?? "its todo, onToggle (in the context)"
    let withClosures = closures.counts.counts[name] ?? 0
    let withHandles = handles.counts.counts[name] ?? 0
    print(pad(name, 12) + pad(read, 38) + pad("\(withClosures)", 10, right: true) + pad("\(withHandles)", 10, right: true))
}
print(String(repeating: "-", count: 70))
let totalClosures = closures.counts.counts.values.reduce(0, +)
let totalHandles = handles.counts.counts.values.reduce(0, +)
print(pad("total", 50) + pad("\(totalClosures)", 10, right: true) + pad("\(totalHandles)", 10, right: true))
print()
print("Both screens end in the same state: \(closures.store.state.value == handles.store.state.value)")
print()
print("""
With closures, every render of the screen makes new callbacks. A closure cannot be compared, so the rows
(whose context holds one) and the footer (whose props hold one) look changed every time and render with
every update. With handles, the callbacks keep their identity: a row renders only when its own todo
changed, and the footer renders once.
""")
