import OpenCombine
import Stillwater

/// The state of W4: 1 000 counters.
struct ItemsState {
    var items: [Int]
}

/// W4 scoped: a current-value holder of ``ItemsState``; subscriber i observes `items[i]`, deduplicated.
/// Update u adds 1 to `items[u % 1000]` through the library's normal write path, so exactly one
/// subscriber hears of each update. Checksum: deliveries after the initial replay × 1 000 000 + the sum
/// of the values they carried.
func scopedWorkload(_ scale: Scale) -> Workload {
    let subscribers = 1_000
    let updates = scale.count(5_000)
    let initial = ItemsState(items: Array(repeating: 0, count: subscribers))

    return Workload(
        name: "W4", title: "scoped ×1000", operation: "update", operations: updates,
        contenders: [
            Contender(.stillwater, name: "Stillwater (\(StillwaterScoped.label))") { stopwatch in
                let state = StillwaterScoped(initial)
                let tally = Tally()
                let subscriptions = (0..<subscribers).map { index in state.observe(item: index, tally.record) }
                tally.reset()
                stopwatch.measure {
                    for update in 0..<updates { state.increment(item: update % subscribers) }
                }
                withExtendedLifetime(subscriptions) {}
                return tally.checksum
            },
            Contender(.openCombine) { stopwatch in
                let subject = CurrentValueSubject<ItemsState, Never>(initial)
                let tally = Tally()
                let cancellables = (0..<subscribers).map { index in
                    subject.map { $0.items[index] }.removeDuplicates().sink(receiveValue: tally.record)
                }
                tally.reset()
                stopwatch.measure {
                    for update in 0..<updates { subject.value.items[update % subscribers] += 1 }
                }
                withExtendedLifetime(cancellables) {}
                return tally.checksum
            },
            Contender(.baseline) { stopwatch in
                let state = ScopedObservers(initial)
                let tally = Tally()
                for index in 0..<subscribers { state.observe(item: index, tally.record) }
                tally.reset()
                stopwatch.measure {
                    for update in 0..<updates { state.increment(item: update % subscribers) }
                }
                return tally.checksum
            },
        ]
    )
}

/// Counts deliveries and sums their values (W4's checksum).
final class Tally {
    private var deliveries = 0
    private var sum = 0

    func record(_ value: Int) {
        deliveries += 1
        sum &+= value
    }

    func reset() { (deliveries, sum) = (0, 0) }
    var checksum: Int { deliveries &* 1_000_000 &+ sum }
}

/// A hand-written state holder: after each in-place write, every observer reads its own slot and
/// compares it with the last value it saw; no copies of the state, no type erasure.
private final class ScopedObservers {
    private var state: ItemsState
    private var observers: [(ItemsState) -> Void] = []

    init(_ state: ItemsState) { self.state = state }

    func observe(item index: Int, _ onChange: @escaping (Int) -> Void) {
        let last = Latest(state.items[index])
        onChange(last.value)
        observers.append { state in
            let value = state.items[index]
            if value != last.value {
                last.value = value
                onChange(value)
            }
        }
    }

    func increment(item index: Int) {
        state.items[index] += 1
        for observer in observers { observer(state) }
    }
}
