import OpenCombine
import Stillwater

/// The state of W5.
struct StoreState {
    var count = 0
    var name = "x"
    var flags = Array(repeating: false, count: 16)
}

/// W5's only action.
struct Increment {
    func reduce(_ state: inout StoreState) { state.count += 1 }
}

/// The reducer form, for libraries without a store: `value = reduce(value, action)`.
func reduce(_ state: StoreState, _ action: Increment) -> StoreState {
    var state = state
    action.reduce(&state)
    return state
}

/// W5 store: one subscriber observes `count` (deduplicated); `count` dispatches of ``Increment``.
/// Checksum: deliveries after the initial one × 1 000 000 + the sum of the counts they carried.
func storeWorkload(_ scale: Scale) -> Workload {
    storeWorkload(
        name: "W5", title: "store dispatch", dispatches: scale.count(1_000_000), observers: 1,
        observed: .count
    )
}

/// W5b: as W5, but 100 subscribers, subscriber j observing `flags[j % 16]`, which never changes; so
/// no deliveries after the initial ones. Checksum: as W5, plus the final `count`.
func dedupStoreWorkload(_ scale: Scale) -> Workload {
    storeWorkload(
        name: "W5b", title: "store, 100 deduplicated", dispatches: scale.count(200_000), observers: 100,
        observed: .flag
    )
}

/// What the subscribers of a store workload observe.
enum StoreSlice {
    case count, flag
}

private func storeWorkload(
    name: String, title: String, dispatches: Int, observers: Int, observed: StoreSlice
) -> Workload {
    Workload(
        name: name, title: title, operation: "dispatch", operations: dispatches, countsAllocations: true,
        contenders: [
            Contender(.stillwater, name: "Stillwater (\(StillwaterStore.label))") { stopwatch in
                let store = StillwaterStore(StoreState())
                let tally = Tally()
                let subscriptions = (0..<observers).map { index in
                    switch observed {
                    case .count: store.observeCount(tally.record)
                    case .flag: store.observeFlag(index % 16) { tally.record($0 ? 1 : 0) }
                    }
                }
                tally.reset()
                stopwatch.measure {
                    for _ in 0..<dispatches { store.dispatch(Increment()) }
                }
                withExtendedLifetime(subscriptions) {}
                return tally.checksum &+ (observed == .flag ? store.count : 0)
            },
            Contender(.openCombine, name: "OpenCombine (CurrentValueSubject + reducer)") { stopwatch in
                let subject = CurrentValueSubject<StoreState, Never>(StoreState())
                let tally = Tally()
                let cancellables = (0..<observers).map { index in
                    switch observed {
                    case .count:
                        subject.map { $0.count }.removeDuplicates().sink(receiveValue: tally.record)
                    case .flag:
                        subject.map { $0.flags[index % 16] }.removeDuplicates().sink { tally.record($0 ? 1 : 0) }
                    }
                }
                tally.reset()
                stopwatch.measure {
                    for _ in 0..<dispatches { subject.value = reduce(subject.value, Increment()) }
                }
                withExtendedLifetime(cancellables) {}
                return tally.checksum &+ (observed == .flag ? subject.value.count : 0)
            },
            Contender(.baseline) { stopwatch in
                let store = HandStore(StoreState())
                let tally = Tally()
                for index in 0..<observers {
                    switch observed {
                    case .count: store.observe({ $0.count }, tally.record)
                    case .flag: store.observe({ $0.flags[index % 16] }) { tally.record($0 ? 1 : 0) }
                    }
                }
                tally.reset()
                stopwatch.measure {
                    for _ in 0..<dispatches { store.dispatch(Increment()) }
                }
                return tally.checksum &+ (observed == .flag ? store.state.count : 0)
            },
        ]
    )
}

/// A hand-written store: reduces in place, then lets each observer read its slice and compare it with
/// the last one it saw. No locks, no queue, no type erasure of the state.
private final class HandStore {
    private(set) var state: StoreState
    private var observers: [(StoreState) -> Void] = []

    init(_ state: StoreState) { self.state = state }

    func observe<Slice: Equatable>(_ slice: @escaping (StoreState) -> Slice, _ onChange: @escaping (Slice) -> Void) {
        let last = Latest(slice(state))
        onChange(last.value)
        observers.append { state in
            let value = slice(state)
            if value != last.value {
                last.value = value
                onChange(value)
            }
        }
    }

    func dispatch(_ action: Increment) {
        action.reduce(&state)
        for observer in observers { observer(state) }
    }
}
