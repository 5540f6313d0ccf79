// A counter driven by a Stillwater store. Run it with `swift run counter`.
//
// Two output lines observe two slices of the state: the count and the step. Each is printed only when
// its own slice changed, so changing the step never reprints the count, and an action that leaves the
// count alone prints nothing about it.

import Stillwater

struct Counter: Equatable {
    var count = 0
    var step = 1
}

/// The Redux shape: one enum of actions.
enum CounterAction: Action, Codable {
    case increment
    case decrement
    case setStep(Int)

    func reduce(_ state: inout Counter) {
        switch self {
        case .increment: state.count += state.step
        case .decrement: state.count -= state.step
        case .setStep(let step): state.step = step
        }
    }
}

/// The Delta shape: a struct per action.
struct Reset: Action {
    func reduce(_ state: inout Counter) { state = Counter() }
}

/// A dynamic action: it reads the state once, decides, dispatches, and answers. (It does not loop until
/// the state changes: dispatched from an observer, its actions would be queued behind the current one.)
struct IncrementUntil: DynamicAction {
    let limit: Int
    func call(_ store: Store<Counter>) -> Int {
        let state = store.state.value
        let steps = max(0, (limit - state.count) / state.step)
        for _ in 0..<steps { store.dispatch(CounterAction.increment) }
        return steps
    }
}

let history = History<CounterAction>(undoLimit: 20)
let actionsSeen = Middleware<Counter> { _, action, next in
    print("  dispatch \(action)")
    next(action)
}
let store = Store(Counter(), middleware: [actionsSeen, history.middleware])

let subscriptions = SubscriptionBag()
store.scope(\.count).observe { print("    count -> \($0)") }.store(in: subscriptions)
store.scope(\.step).observe { print("    step  -> \($0)") }.store(in: subscriptions)

func say(_ line: String) { print("\n" + line) }

say("Increment twice:")
store.dispatch(CounterAction.increment)
store.dispatch(CounterAction.increment)

say("Set the step to 5 (the count line stays quiet):")
store.dispatch(CounterAction.setStep(5))

say("Set the step to 5 again (nothing changes, nothing prints):")
store.dispatch(CounterAction.setStep(5))

say("Increment until 20 (a dynamic action):")
let steps = store.dispatch(IncrementUntil(limit: 20))
print("  took \(steps) steps")

say("Undo twice, then redo once:")
store.dispatch(history.undo)
store.dispatch(history.undo)
store.dispatch(history.redo)

say("Reset:")
store.dispatch(Reset())

print("\nRecorded \(history.entries.count) history entries; final state \(store.state.value).")
