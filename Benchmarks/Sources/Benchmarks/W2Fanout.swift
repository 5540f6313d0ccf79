import OpenCombine
import Stillwater

/// W2 fan-out: one publish subject, 1 000 subscribers each adding every value into its own box;
/// sends 0..<count. Checksum: the sum over all boxes.
func fanoutWorkload(_ scale: Scale) -> Workload {
    let subscribers = 1_000
    let count = scale.count(10_000)

    /// Reads the boxes after the timed part.
    func total(_ boxes: [Box]) -> Int { boxes.reduce(0) { $0 &+ $1.value } }

    return Workload(
        name: "W2", title: "fan-out ×1000", operation: "delivery", operations: count * subscribers,
        countsAllocations: true,
        contenders: [
            Contender(.stillwater) { stopwatch in
                let subject = PublishSubject<Int>()
                let boxes = (0..<subscribers).map { _ in Box() }
                let subscriptions = boxes.map { box in subject.observe { box.value &+= $0 } }
                stopwatch.measure {
                    for value in 0..<count { subject.send(value) }
                }
                withExtendedLifetime(subscriptions) {}
                return total(boxes)
            },
            Contender(.openCombine) { stopwatch in
                let subject = PassthroughSubject<Int, Never>()
                let boxes = (0..<subscribers).map { _ in Box() }
                let cancellables = boxes.map { box in subject.sink { box.value &+= $0 } }
                stopwatch.measure {
                    for value in 0..<count { subject.send(value) }
                }
                withExtendedLifetime(cancellables) {}
                return total(boxes)
            },
            Contender(.baseline, name: "closure array") { stopwatch in
                let boxes = (0..<subscribers).map { _ in Box() }
                let observers: [(Int) -> Void] = boxes.map { box in { box.value &+= $0 } }
                stopwatch.measure {
                    for value in 0..<count {
                        for observer in observers { observer(value) }
                    }
                }
                return total(boxes)
            },
        ]
    )
}
