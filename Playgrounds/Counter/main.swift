// A counter driven by a Stillwater store. Run it with `swift run counter`.
//
// Two output lines observe two slices of the state: the count and the step. Each is printed only when
// its own slice changed, so changing the step never reprints the count, and an action that leaves the
// count alone prints nothing about it. A logging middleware prints every dispatched action (the
// "dispatch" lines), whether or not it changes the state.
//
// The history records only `CounterAction`s. `Reset` is another action type, so it is not recorded: an
// undo after it goes back to the state before the last recorded action, skipping over the reset (the end
// of the program shows this).
//
// `AutoIncrement` is an effect action: `.start` returns a timer effect that sends an increment every
// 100 ms, made cancellable by an id, and `.stop` cancels that id. An observer stops it once the count
// reaches 20; after the cancel is reduced, no increment of the timer is reduced any more.

import Dispatch
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

/// A dynamic action: it reads the state once, decides how many increments bring the count to `limit` or
/// just past it, dispatches them, and answers how many. (It does not loop until the state changes:
/// dispatched from an observer, its actions would be queued behind the current one.) With a step of zero
/// or less, increments never reach the limit, so it dispatches none.
struct IncrementUntil: DynamicAction {
    let limit: Int
    func call(_ store: Store<Counter>) -> Int {
        let state = store.state.value
        guard state.step > 0, state.count < limit else { return 0 }
        let steps = (limit - state.count + state.step - 1) / state.step
        for _ in 0..<steps { store.dispatch(CounterAction.increment) }
        return steps
    }
}

/// An effect action whose effects send `CounterAction`s: a timer that increments, and its cancellation.
enum AutoIncrement: EffectAction {
    case start, stop

    func reduce(into state: inout Counter) -> Effect<CounterAction> {
        switch self {
        case .start:
            return .stream { dependencies in
                Observable.interval(.milliseconds(100), scheduler: dependencies.scheduler)
                    .map { _ in CounterAction.increment }
            }
            .cancellable(id: "auto-increment", cancelInFlight: true)
        case .stop:
            return .cancel(id: "auto-increment")
        }
    }
}

// Records `CounterAction`s only; `Reset` passes through unrecorded.
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

say("Set the step to 3 (the count line stays quiet):")
store.dispatch(CounterAction.setStep(3))

say("Set the step to 3 again (the action is logged, but the state does not change, so no slice prints):")
store.dispatch(CounterAction.setStep(3))

say("Increment until 20 (a dynamic action):")
let steps = store.dispatch(IncrementUntil(limit: 20))
print("  took \(steps) steps")

say("Undo twice, then redo once:")
store.dispatch(history.undo)
store.dispatch(history.undo)
store.dispatch(history.redo)

say("Reset:")
store.dispatch(Reset())

say("Undo after the reset (Reset is not recorded, so undo skips it and restores the state before the last")
print("recorded action, the redone increment: count 14, step 3, not the 17 the reset replaced):")
store.dispatch(history.undo)

say("Auto-increment every 100 ms (an effect), stopped by a cancel by id once the count reaches 20:")
let reachedTwenty = DispatchSemaphore(value: 0)
let stopper = store.scope(\.count).changes.observe { count in
    guard count >= 20 else { return }
    store.dispatch(AutoIncrement.stop)      // queued: reduced right after this state's delivery
    reachedTwenty.signal()
}
store.dispatch(AutoIncrement.start)
reachedTwenty.wait()
stopper.cancel()

print("\nRecorded \(history.entries.count) history entries; final state \(store.state.value).")
