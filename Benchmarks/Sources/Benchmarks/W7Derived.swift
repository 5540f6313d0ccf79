import OpenCombine

/// The state of W7: 1 000 counters and a flag.
struct DerivedState {
    var items: [Int]
    var flag = false
}

/// W7's only action: adds 1 to one item and, in the glitch check only, flips the flag in the same step.
struct Bump {
    var item: Int
    var flipsFlag = false

    func reduce(_ state: inout DerivedState) {
        state.items[item] += 1
        if flipsFlag { state.flag.toggle() }
    }
}

/// The value observer i receives: its item and the flag in one `Int` (`item * 2 + flag`), so that
/// deduplicating it is deduplicating the pair, and either part can be read back.
func combined(_ item: Int, _ flag: Bool) -> Int {
    item &* 2 &+ (flag ? 1 : 0)
}

/// What W7 asks of each library: a store of ``DerivedState`` whose observers each follow a value
/// combined from two parts of it.
protocol DerivedStore: AnyObject {
    init(_ initial: DerivedState)
    /// The state now; during a delivery, the state being delivered.
    var state: DerivedState { get }
    func dispatch(_ action: Bump)
    /// Observer `index`: receives `combined(items[index], flag)` now, then whenever it changed. Returns
    /// what keeps the observer alive.
    func observe(item index: Int, _ onChange: @escaping (Int) -> Void) -> Any
}

/// W7 derived: a store of 1 000 items and a flag; observer i follows a property combining its item and
/// the flag (the flag's derived property is one, shared by all the combinations). Dispatch u adds 1 to
/// `items[u % 1000]`, so exactly one observer hears of each dispatch. Checksum: as W4's.
///
/// Every round also counts *glitches*, untimed, in a second store: values delivered that were computed
/// from a mix of two states. A glitch needs both parts of one combination to change in one dispatch, so
/// in this check every 100th dispatch also flips the flag (which changes every combination; the item's
/// observer sees both parts change at once). Each observer compares what it receives with the state the
/// store holds while delivering (every library here has the new state in place before it tells anyone):
/// a value mixing an old part with a new one differs from it in the old part. The timed run does no such
/// reading and no flipping, so it stays exactly the workload above. A glitch of Stillwater (or of the
/// hand-written store) fails the run; OpenCombine's combination glitches by design (as `combineLatest`
/// does), and its count is only reported.
func derivedWorkload(_ scale: Scale) -> Workload {
    let dispatches = scale.count(5_000)
    let checks = scale.count(1_000)
    return Workload(
        name: "W7", title: "derived ×1000", operation: "dispatch", operations: dispatches, countsAllocations: true,
        contenders: [
            Contender(.stillwater, name: "Stillwater (\(StillwaterDerived.label))") { stopwatch in
                runDerived(StillwaterDerived.self, dispatches: dispatches, checks: checks, stopwatch: &stopwatch)
            },
            Contender(.openCombine, name: "OpenCombine (two map + removeDuplicates, merged + scan)") { stopwatch in
                runDerived(CombineDerived.self, dispatches: dispatches, checks: checks, stopwatch: &stopwatch)
            },
            Contender(.baseline) { stopwatch in
                runDerived(HandDerived.self, dispatches: dispatches, checks: checks, stopwatch: &stopwatch)
            },
        ]
    )
}

private let derivedObservers = 1_000

/// One round of W7 for one library: the timed dispatches, then the untimed glitch check.
private func runDerived<Library: DerivedStore>(
    _ library: Library.Type, dispatches: Int, checks: Int, stopwatch: inout Stopwatch
) -> Int {
    let store = Library(DerivedState(items: Array(repeating: 0, count: derivedObservers)))
    let tally = Tally()
    let subscriptions = (0..<derivedObservers).map { index in store.observe(item: index, tally.record) }
    tally.reset()
    stopwatch.measure {
        for dispatch in 0..<dispatches { store.dispatch(Bump(item: dispatch % derivedObservers)) }
    }
    withExtendedLifetime(subscriptions) {}

    stopwatch.glitches = countGlitches(Library.self, dispatches: checks)
    stopwatch.note = "flag flips checked: \((checks + 99) / 100)"
    return tally.checksum
}

/// Dispatches `dispatches` bumps, every 100th also flipping the flag, and counts the delivered values
/// that differ from the combination of the state being delivered.
private func countGlitches<Library: DerivedStore>(_ library: Library.Type, dispatches: Int) -> Int {
    let store = Library(DerivedState(items: Array(repeating: 0, count: derivedObservers)))
    let glitches = Box()
    let subscriptions = (0..<derivedObservers).map { index in
        store.observe(item: index) { [unowned store] value in
            let state = store.state
            if value != combined(state.items[index], state.flag) { glitches.value += 1 }
        }
    }
    for dispatch in 0..<dispatches {
        store.dispatch(Bump(item: dispatch % derivedObservers, flipsFlag: dispatch % 100 == 0))
    }
    withExtendedLifetime(subscriptions) {}
    return glitches.value
}

/// OpenCombine: a `CurrentValueSubject` and the reducer; observer i combines the latest of
/// `map { $0.items[i] }.removeDuplicates()` and `map { $0.flag }.removeDuplicates()`.
///
/// OpenCombine 0.14 has neither `combineLatest` nor `merge`, so the same semantics are built from its
/// own operators: both inputs merged by `flatMap` over a sequence of the two, `scan` keeping the latest
/// of each, and a value out for every input once both have one. Like `combineLatest`, it emits once per
/// input that changed, so a dispatch that changes both emits a mix first.
private final class CombineDerived: DerivedStore {
    /// One input of an observer's combination, so that both travel through one stream.
    private enum Part {
        case item(Int), flag(Bool)
    }

    private let subject: CurrentValueSubject<DerivedState, Never>

    init(_ initial: DerivedState) { subject = CurrentValueSubject(initial) }

    var state: DerivedState { subject.value }

    func dispatch(_ action: Bump) {
        var state = subject.value
        action.reduce(&state)
        subject.value = state
    }

    func observe(item index: Int, _ onChange: @escaping (Int) -> Void) -> Any {
        let item = subject.map { $0.items[index] }.removeDuplicates().map(Part.item).eraseToAnyPublisher()
        let flag = subject.map { $0.flag }.removeDuplicates().map(Part.flag).eraseToAnyPublisher()
        return [item, flag].publisher
            .flatMap { $0 }
            .scan((item: Int?.none, flag: Bool?.none)) { latest, part in
                switch part {
                case .item(let item): (item, latest.flag)
                case .flag(let flag): (latest.item, flag)
                }
            }
            .compactMap { latest in latest.item.flatMap { item in latest.flag.map { combined(item, $0) } } }
            .sink(receiveValue: onChange)
    }
}

/// A hand-written store: reduces in place, then lets each observer read its item and the flag, compare
/// them with the last pair it saw, and call back with their combination when either changed.
private final class HandDerived: DerivedStore {
    private(set) var state: DerivedState
    private var observers: [(DerivedState) -> Void] = []

    init(_ initial: DerivedState) { state = initial }

    func dispatch(_ action: Bump) {
        action.reduce(&state)
        for observer in observers { observer(state) }
    }

    func observe(item index: Int, _ onChange: @escaping (Int) -> Void) -> Any {
        let last = Latest((item: state.items[index], flag: state.flag))
        onChange(combined(last.value.item, last.value.flag))
        observers.append { state in
            let item = state.items[index], flag = state.flag
            if item != last.value.item || flag != last.value.flag {
                last.value = (item, flag)
                onChange(combined(item, flag))
            }
        }
        return ()
    }
}
