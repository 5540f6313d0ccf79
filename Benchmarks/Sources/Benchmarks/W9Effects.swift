import OpenCombine
import Stillwater

/// W9's state: how many round trips started, and the sum of what the effects sent back.
struct EffectState {
    var started = 0
    var total = 0
}

/// W9 in Stillwater: `.start(v)` counts a start and returns a stream effect that sends `.done(v)` back
/// at once; `.done(v)` adds `v`.
enum RoundTrip: EffectAction {
    case start(Int), done(Int)

    func reduce(into state: inout EffectState) -> Effect<RoundTrip> {
        switch self {
        case .start(let value):
            state.started += 1
            return .stream(Observable.just(.done(value)))
        case .done(let value):
            state.total &+= value
            return .none
        }
    }
}

/// W9's actions for the peers, with the reducer form: the new state, and the action an effect sends
/// back (if any).
enum PlainRoundTrip {
    case start(Int), done(Int)

    func reduce(_ state: inout EffectState) -> PlainRoundTrip? {
        switch self {
        case .start(let value):
            state.started += 1
            return .done(value)
        case .done(let value):
            state.total &+= value
            return nil
        }
    }
}

/// W9 effects: `count` actions, each starting a stream effect whose one action (available at once) the
/// store reduces; one subscriber observes `total`, deduplicated. Measured per round trip (an action and
/// its effect's action). Checksum: the tally of `total`'s deliveries, plus `started`.
func effectsWorkload(_ scale: Scale) -> Workload {
    let count = scale.count(100_000)
    return Workload(
        name: "W9", title: "store effects round trip", operation: "round trip", operations: count,
        countsAllocations: true,
        contenders: [
            Contender(.stillwater, name: "Stillwater (Store + EffectAction + Effect.stream)") { stopwatch in
                let store = Store(EffectState())
                let tally = Tally()
                let subscription = store.state.map { $0.total }.distinctUntilChanged().observe(tally.record)
                tally.reset()
                stopwatch.measure {
                    for value in 0..<count { store.dispatch(RoundTrip.start(value)) }
                }
                withExtendedLifetime(subscription) {}
                return tally.checksum &+ store.state.value.started
            },
            Contender(.openCombine, name: "OpenCombine (CurrentValueSubject + reducer + flatMap of effects)") { stopwatch in
                let state = CurrentValueSubject<EffectState, Never>(EffectState())
                let actions = PassthroughSubject<PlainRoundTrip, Never>()
                let tally = Tally()
                let observer = state.map { $0.total }.removeDuplicates().sink(receiveValue: tally.record)
                let loop = actions
                    .flatMap { action -> AnyPublisher<PlainRoundTrip, Never> in
                        var next = state.value
                        let effect = action.reduce(&next)
                        state.value = next
                        guard let effect else { return Empty().eraseToAnyPublisher() }
                        return Just(effect).eraseToAnyPublisher()
                    }
                    .sink { actions.send($0) }
                tally.reset()
                stopwatch.measure {
                    for value in 0..<count { actions.send(.start(value)) }
                }
                withExtendedLifetime((observer, loop)) {}
                return tally.checksum &+ state.value.started
            },
            Contender(.baseline) { stopwatch in
                let store = HandEffectStore()
                let tally = Tally()
                store.observeTotal(tally.record)
                tally.reset()
                stopwatch.measure {
                    for value in 0..<count { store.dispatch(.start(value)) }
                }
                return tally.checksum &+ store.state.started
            },
        ]
    )
}

/// W9 by hand: reduce in place; an effect is the action it sends back, kept in a queue the dispatch
/// drains, so an action an effect sends is reduced after the current one. No locks, no type erasure.
private final class HandEffectStore {
    private(set) var state = EffectState()
    private var queue: [PlainRoundTrip] = []
    private var draining = false
    private var observer: (Int) -> Void = { _ in }
    private var lastTotal = 0

    func observeTotal(_ onChange: @escaping (Int) -> Void) {
        observer = onChange
        lastTotal = state.total
        onChange(lastTotal)
    }

    func dispatch(_ action: PlainRoundTrip) {
        queue.append(action)
        guard !draining else { return }
        draining = true
        var index = 0
        while index < queue.count {
            let effect = queue[index].reduce(&state)
            index += 1
            if state.total != lastTotal {
                lastTotal = state.total
                observer(lastTotal)
            }
            if let effect { queue.append(effect) }
        }
        queue.removeAll(keepingCapacity: true)
        draining = false
    }
}
