import OpenCombine
import Stillwater

/// W3 churn: a publish subject with 100 standing subscribers; `count` times, subscribe a new subscriber
/// and dispose of it. Then one value is sent. Checksum: the deliveries of that value (100), plus 1 000
/// for each delivery that reached a disposed subscriber (there must be none).
func churnWorkload(_ scale: Scale) -> Workload {
    let standing = 100
    let count = scale.count(200_000)

    return Workload(
        name: "W3", title: "subscribe+dispose", operation: "pair", operations: count, countsAllocations: true,
        contenders: [
            Contender(.stillwater) { stopwatch in
                let subject = PublishSubject<Int>()
                let deliveries = Box()
                let subscriptions = (0..<standing).map { _ in subject.observe { _ in deliveries.value += 1 } }
                stopwatch.measure {
                    for _ in 0..<count {
                        subject.observe { _ in deliveries.value += 1_000 }.cancel()
                    }
                }
                subject.send(1)
                withExtendedLifetime(subscriptions) {}
                return deliveries.value
            },
            Contender(.openCombine) { stopwatch in
                let subject = PassthroughSubject<Int, Never>()
                let deliveries = Box()
                let cancellables = (0..<standing).map { _ in subject.sink { _ in deliveries.value += 1 } }
                stopwatch.measure {
                    for _ in 0..<count {
                        subject.sink { _ in deliveries.value += 1_000 }.cancel()
                    }
                }
                subject.send(1)
                withExtendedLifetime(cancellables) {}
                return deliveries.value
            },
            Contender(.baseline, name: "closure list") { stopwatch in
                let subject = ClosureList()
                let deliveries = Box()
                for _ in 0..<standing { _ = subject.add { _ in deliveries.value += 1 } }
                stopwatch.measure {
                    for _ in 0..<count {
                        subject.remove(subject.add { _ in deliveries.value += 1_000 })
                    }
                }
                subject.send(1)
                return deliveries.value
            },
        ]
    )
}

/// A hand-written subject: an array of (token, closure) pairs; adding appends, removing searches from
/// the end (where a short-lived subscriber sits). Not thread-safe, no reentrancy rules.
private final class ClosureList {
    private var observers: [(token: Int, body: (Int) -> Void)] = []
    private var nextToken = 0

    @inline(never)
    func add(_ body: @escaping (Int) -> Void) -> Int {
        nextToken += 1
        observers.append((nextToken, body))
        return nextToken
    }

    @inline(never)
    func remove(_ token: Int) {
        if let index = observers.lastIndex(where: { $0.token == token }) { observers.remove(at: index) }
    }

    func send(_ value: Int) {
        for observer in observers { observer.body(value) }
    }
}
