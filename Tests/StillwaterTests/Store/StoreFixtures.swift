import Foundation
import Stillwater
import Synchronization

/// The state most store tests use.
struct Tally: Equatable, Codable, Sendable {
    var count = 0
    var name = "x"
    var a = 0
    var b = 0
    var items: [String] = []
}

/// The Redux shape: one enum, one `reduce` that switches on it.
enum TallyAction: Action, Equatable, Codable, Sendable {
    case increment
    case add(Int)
    case rename(String)
    case setA(Int)
    case setB(Int)
    case append(String)

    func reduce(_ state: inout Tally) {
        switch self {
        case .increment: state.count += 1
        case .add(let amount): state.count += amount
        case .rename(let name): state.name = name
        case .setA(let value): state.a = value
        case .setB(let value): state.b = value
        case .append(let item): state.items.append(item)
        }
    }
}

/// The Delta shape: one struct per action.
struct Increment: Action, Sendable {
    var by = 1
    func reduce(_ state: inout Tally) { state.count += by }
}

/// What a subscriber saw when it subscribed while another thread was held inside the delivery of action
/// 1 and this thread had queued action 2: before the held thread went on, after it finished, and after
/// one more action. Each entry reads "<count told> reads <state.value.count then>".
struct QueuedSubscriberLog: Equatable {
    var beforeRelease: [String]
    var afterRelease: [String]
    var afterNextAction: [String]
}

/// Holds a dispatch of `.increment` on another thread inside its delivery, queues a second one from this
/// thread, then subscribes through `subscribe` (which passes each count it is told to its closure).
func queuedSubscriberLog(
    _ subscribe: (Store<Tally>, @escaping @Sendable (Int) -> Void) -> Subscription
) -> QueuedSubscriberLog {
    let store = Store(Tally())
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let blocker = store.scope(\.count).changes.observe { count in
        if count == 1 {
            entered.signal()
            release.wait()
        }
    }
    let done = DispatchSemaphore(value: 0)
    let reducing = Thread {
        store.dispatch(TallyAction.increment)
        done.signal()
    }
    reducing.start()
    entered.wait()
    store.dispatch(TallyAction.increment)
    let seen = Mutex<[String]>([])
    let late = subscribe(store) { count in
        seen.withLock { $0.append("\(count) reads \(store.state.value.count)") }
    }
    var log = QueuedSubscriberLog(beforeRelease: seen.withLock { $0 }, afterRelease: [], afterNextAction: [])
    release.signal()
    done.wait()
    log.afterRelease = seen.withLock { $0 }
    store.dispatch(TallyAction.increment)
    log.afterNextAction = seen.withLock { $0 }
    _ = (blocker, late)
    return log
}
