// A list of countdown timers, one child feature per row, and an optional detail of one of them: run with
// `swift run child-features`. Each row's timer is its own effect; removing the row cancels it, and a tick
// that arrives for a removed row is dropped and reported (on standard error, with no handler).
import Dispatch
import Stillwater

struct Countdown: Identifiable, Equatable {
    let id: Int
    var remaining: Int
}

enum CountdownAction: EffectAction {
    case start, tick

    func reduce(into countdown: inout Countdown, dependencies: Dependencies) -> Effect<CountdownAction> {
        switch self {
        case .start:
            return .stream { dependencies in
                Observable.interval(.milliseconds(100), scheduler: dependencies.scheduler).map { _ in .tick }
            }
        case .tick:
            countdown.remaining = max(0, countdown.remaining - 1)
            return .none
        }
    }
}

struct Timers: Equatable {
    var rows: [Countdown] = []
    var detail: Countdown?
}

enum TimersAction: EffectAction {
    case add(Int, seconds: Int), remove(Int), row(Int, CountdownAction), showDetail(Int), hideDetail
    case detail(CountdownAction)

    func reduce(into state: inout Timers) -> Effect<TimersAction> {
        switch self {
        case .add(let id, let seconds):
            state.rows.append(Countdown(id: id, remaining: seconds))
            return .none
        case .remove(let id):
            state.rows.removeAll { $0.id == id }
            return .none
        case .showDetail(let id):
            state.detail = state.rows.first { $0.id == id }
            return .none
        case .hideDetail:
            state.detail = nil
            return .none
        // One case per child feature: routed by id, effects cancelled when the row or the detail goes.
        case .row(let id, let action):
            return .forEach(\.rows, id: id, action, in: &state) { .row(id, $0) }
        case .detail(let action):
            return .ifLet(\.detail, action, in: &state) { .detail($0) }
        }
    }
}

/// The demo, off the main actor: the store's observers run on the timers' queue.
nonisolated func runDemo() {
    let queue = DispatchQueue(label: "timers")
    let store = Store(Timers(), dependencies: Dependencies { $0.scheduler = queue })
    let printer = store.state.map { state in
        state.rows.map { "#\($0.id): \($0.remaining)" }.joined(separator: "  ")
            + (state.detail.map { "  | detail #\($0.id): \($0.remaining)" } ?? "")
    }.distinctUntilChanged().observe { print($0) }

    store.dispatch(TimersAction.add(1, seconds: 50))
    store.dispatch(TimersAction.add(2, seconds: 50))
    store.dispatch(TimersAction.row(1, .start))
    store.dispatch(TimersAction.row(2, .start))
    store.dispatch(TimersAction.showDetail(2))
    store.dispatch(TimersAction.detail(.start))
    Thread.sleep(milliseconds: 350)
    print("removing #1 and hiding the detail: their timers stop")
    store.dispatch(TimersAction.remove(1))
    store.dispatch(TimersAction.hideDetail)
    print("running effects:", store.runningEffectCount)
    Thread.sleep(milliseconds: 250)
    print("a tick for the removed #1 is dropped and reported:")
    store.dispatch(TimersAction.row(1, .tick))
    withExtendedLifetime(printer) {}
}

runDemo()

enum Thread {
    static func sleep(milliseconds: Int) {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { done.signal() }
        done.wait()
    }
}
