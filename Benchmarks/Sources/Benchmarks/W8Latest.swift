import OpenCombine
import Stillwater

/// The error W8's inner streams fail with, one time in 100.
struct InnerFailure: Error {}

/// W8 latest: each outer value `v` switches to a new inner stream that sends `v` and completes, or,
/// when `v % 100 == 99`, fails; `catch` recovers it with `-1`. Each value that comes out is joined with
/// the latest value of another subject (`withLatestFrom`), which changes every 1 000 outer values, and a
/// sink sums `value &+ latest`. Checksum: the sum.
///
/// This is the search-as-you-type shape: a request per query, the latest only, a failed request
/// recovered, and the result read together with other state.
func latestWorkload(_ scale: Scale) -> Workload {
    let count = scale.count(1_000_000)
    return Workload(
        name: "W8", title: "flatMapLatest + catch + withLatestFrom", operation: "value", operations: count,
        countsAllocations: true,
        contenders: [
            Contender(.stillwater) { stopwatch in
                let outer = PublishSubject<Int>()
                let other = PublishSubject<Int>()
                let sum = Box()
                let subscription = outer
                    .flatMapLatest { value in
                        (value % 100 == 99 ? Observable<Int>.failure(InnerFailure()) : Observable.just(value))
                            .catch { _ in Observable.just(-1) }
                    }
                    .withLatestFrom(other) { $0 &+ $1 }
                    .observe { sum.value &+= $0 }
                other.send(0)
                stopwatch.measure { drive(count, other: other.send, outer: outer.send) }
                withExtendedLifetime(subscription) {}
                return sum.value
            },
            Contender(.openCombine, name: "OpenCombine (map + switchToLatest + catch; the latest read in map)") { stopwatch in
                let outer = PassthroughSubject<Int, Never>()
                let other = PassthroughSubject<Int, Never>()
                let sum = Box()
                // No withLatestFrom in OpenCombine 0.14: a sink keeps the other subject's latest value and
                // `map` reads it (the cheaper of the two usual forms; see README).
                let latest = Box()
                let latestCancellable = other.sink { latest.value = $0 }
                let cancellable = outer
                    .map { value in
                        (value % 100 == 99
                            ? Fail<Int, InnerFailure>(error: InnerFailure()).eraseToAnyPublisher()
                            : Just(value).setFailureType(to: InnerFailure.self).eraseToAnyPublisher())
                            .catch { _ in Just(-1) }
                    }
                    .switchToLatest()
                    .map { $0 &+ latest.value }
                    .sink { sum.value &+= $0 }
                other.send(0)
                stopwatch.measure { drive(count, other: other.send, outer: outer.send) }
                withExtendedLifetime((cancellable, latestCancellable)) {}
                return sum.value
            },
            Contender(.baseline) { stopwatch in
                let pipeline = HandLatest()
                stopwatch.measure { drive(count, other: { pipeline.latest = $0 }, outer: { pipeline.send(opaque($0)) }) }
                return pipeline.total.value
            },
        ]
    )
}

/// W8's timed loop: `count` outer values; before every 1 000th, a new value of the other input.
@inline(__always)
private func drive(_ count: Int, other: (Int) -> Void, outer: (Int) -> Void) {
    for value in 0..<count {
        if value % 1_000 == 0 { other(value / 1_000) }
        outer(value)
    }
}

/// W8 by hand: each value replaces the current inner "subscription" (one object, as any switch to a new
/// inner stream needs), the inner step fails or sends, a failure is replaced by `-1`, and the result is
/// added with the latest value of the other input. No locks, no events, one allocation per value.
private final class HandLatest {
    /// The least a new inner stream costs: an object that says which one is current.
    final class Inner {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    var latest = 0
    let total: Box
    private var current: Inner?
    private let sink: (Int) -> Void

    init() {
        let total = Box()
        self.total = total
        sink = opaque { total.value &+= $0 }
    }

    func send(_ value: Int) {
        let inner = Inner(value)
        current = inner
        let result: Swift.Result<Int, InnerFailure> = value % 100 == 99 ? .failure(InnerFailure()) : .success(inner.value)
        guard current === inner else { return }
        switch result {
        case .success(let value): sink(value &+ latest)
        case .failure: sink(-1 &+ latest)
        }
    }
}
