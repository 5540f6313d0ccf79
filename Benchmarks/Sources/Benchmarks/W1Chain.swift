import OpenCombine
import Stillwater

/// W1 chain: `map { $0 &* 3 } -> filter { $0 & 1 == 0 } -> map { $0 >> 3 } -> distinctUntilChanged
/// -> sink { sum &+= $0 }` over the values 0..<count sent into a publish subject. Checksum: the sum.
func chainWorkload(_ scale: Scale) -> Workload {
    let count = scale.count(2_000_000)
    return Workload(
        name: "W1", title: "chain", operation: "value", operations: count, countsAllocations: true,
        contenders: [
            Contender(.stillwater) { stopwatch in
                let subject = PublishSubject<Int>()
                let sum = Box()
                let subscription = subject
                    .map { $0 &* 3 }
                    .filter { $0 & 1 == 0 }
                    .map { $0 >> 3 }
                    .distinctUntilChanged()
                    .observe { sum.value &+= $0 }
                stopwatch.measure {
                    for value in 0..<count { subject.send(value) }
                }
                withExtendedLifetime(subscription) {}
                return sum.value
            },
            Contender(.openCombine) { stopwatch in
                let subject = PassthroughSubject<Int, Never>()
                let sum = Box()
                let cancellable = subject
                    .map { $0 &* 3 }
                    .filter { $0 & 1 == 0 }
                    .map { $0 >> 3 }
                    .removeDuplicates()
                    .sink { sum.value &+= $0 }
                stopwatch.measure {
                    for value in 0..<count { subject.send(value) }
                }
                withExtendedLifetime(cancellable) {}
                return sum.value
            },
            Contender(.baseline, name: "closure chain", run: { stopwatch in
                let source = closureChain(into: Box())
                stopwatch.measure {
                    for value in 0..<count { source.send(value) }
                }
                return source.sum.value
            }),
            Contender(.limit) { stopwatch in
                let count = opaque(count)
                return stopwatch.measure {
                    var sum = 0
                    var last: Int?
                    for value in 0..<count {
                        let tripled = value &* 3
                        guard tripled & 1 == 0 else { continue }
                        let shifted = tripled >> 3
                        if shifted != last {
                            last = shifted
                            sum &+= shifted
                        }
                    }
                    return sum
                }
            },
        ]
    )
}

/// The honest floor for a push-based pipeline: the four stages and the sink as five separate closures,
/// each calling the next, as a reactive library's nodes do, but with no subscriptions, locks or events.
///
/// Each closure passes through ``opaque(_:)`` before the previous stage captures it, so the optimiser
/// cannot inline the chain into one fused loop.
private struct ClosureChain {
    let send: (Int) -> Void
    let sum: Box
}

@inline(never)
private func closureChain(into sum: Box) -> ClosureChain {
    let sink = opaque { sum.value &+= $0 }
    let last = Latest<Int?>(nil)
    let distinct = opaque { value in
        if value != last.value {
            last.value = value
            sink(value)
        }
    }
    let shift = opaque { distinct($0 >> 3) }
    let filter = opaque { if $0 & 1 == 0 { shift($0) } }
    let triple = opaque { filter($0 &* 3) }
    return ClosureChain(send: triple, sum: sum)
}
