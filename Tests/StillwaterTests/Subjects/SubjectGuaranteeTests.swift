import Dispatch
import Testing
@testable import Stillwater

/// The thread-safety and reentrancy guarantees of DESIGN.md, checked for every hot source.
@Suite("Subject and relay guarantees")
struct SubjectGuaranteeTests {
    static let threads = 4
    static let sendsPerThread = 25_000

    // MARK: Thread safety

    @Test("a non-atomic counter ends at exactly 100 000 when 4 threads send 25 000 values each",
          arguments: SourceKind.allCases)
    func nonAtomicCounter(kind: SourceKind) {
        let harness = kind.make(initial: -1)
        let counter = Shared(0)   // a plain var: only correct if deliveries never overlap
        let subscription = harness.source.observe { value in
            if value >= 0 { counter.value += 1 }
        }
        let send = harness.send
        DispatchQueue.concurrentPerform(iterations: Self.threads) { _ in
            for value in 0..<Self.sendsPerThread { send(value) }
        }
        #expect(counter.value == Self.threads * Self.sendsPerThread)
        withExtendedLifetime(subscription) {}
    }

    @Test("two observers of one source see the same values in the same order, each sender's values in order",
          arguments: SourceKind.allCases)
    func sameOrderForAllObservers(kind: SourceKind) {
        let harness = kind.make(initial: -1)
        let first = Shared<[Int]>([])
        let second = Shared<[Int]>([])
        let a = harness.source.observe { if $0 >= 0 { first.value.append($0) } }
        let b = harness.source.observe { if $0 >= 0 { second.value.append($0) } }
        let send = harness.send
        let perThread = 5_000
        DispatchQueue.concurrentPerform(iterations: Self.threads) { lane in
            for index in 0..<perThread { send(lane * perThread + index) }
        }
        #expect(first.value.count == Self.threads * perThread)
        #expect(first.value == second.value)
        for lane in 0..<Self.threads {
            let fromLane = first.value.filter { $0 / perThread == lane }
            #expect(fromLane == Array(lane * perThread..<(lane + 1) * perThread), "lane \(lane) reordered")
        }
        withExtendedLifetime((a, b)) {}
    }

    @Test("an observer never runs concurrently with itself", arguments: SourceKind.allCases)
    func noOverlap(kind: SourceKind) {
        let harness = kind.make()
        let detector = OverlapDetector()
        let calls = AtomicCounter()
        let subscription = harness.source.observe { _ in
            detector.enter {
                calls.increment()
                // Widen the window in which a second thread could enter.
                var spin = 0
                for step in 0..<20 { spin &+= step }
                _ = spin
            }
        }
        let send = harness.send
        DispatchQueue.concurrentPerform(iterations: Self.threads) { _ in
            for value in 0..<5_000 { send(value) }
        }
        #expect(detector.overlaps == 0)
        #expect(calls.value == Self.threads * 5_000 + (harness.replayed == nil ? 0 : 1))
        withExtendedLifetime(subscription) {}
    }

    // MARK: Reentrancy

    @Test("A and B see A1, B1, A2, B2 when A sends 2 on receiving 1", arguments: SourceKind.allCases)
    func reentrantOrder(kind: SourceKind) {
        let harness = kind.make(initial: -1)
        let log = Shared<[String]>([])
        let send = harness.send
        let a = harness.source.observe { value in
            guard value > 0 else { return }
            log.value.append("A\(value)")
            if value == 1 { send(2) }
        }
        let b = harness.source.observe { value in
            guard value > 0 else { return }
            log.value.append("B\(value)")
        }
        send(1)
        #expect(log.value == ["A1", "B1", "A2", "B2"])
        withExtendedLifetime((a, b)) {}
    }

    @Test("a chain of 100 000 reentrant sends completes without growing the stack",
          arguments: SourceKind.allCases)
    func longReentrantChain(kind: SourceKind) {
        let limit = 100_000
        let harness = kind.make(initial: 0)
        let send = harness.send
        let spread = Shared(StackSpread())
        let last = Shared(-1)
        let received = Shared(0)
        let subscription = harness.source.observe { value in
            spread.value.sample()
            received.value += 1
            last.value = value
            if value < limit { send(value + 1) }
        }
        if harness.replayed == nil { send(0) }
        #expect(last.value == limit)
        #expect(received.value == limit + 1)
        #expect(spread.value.spread < 64 * 1024, "stack grew by \(spread.value.spread) bytes")
        withExtendedLifetime(subscription) {}
    }

    @Test("an observer subscribed during a delivery does not receive the event being delivered",
          arguments: SourceKind.allCases)
    func subscribeDuringDelivery(kind: SourceKind) {
        let harness = kind.make(initial: -1)
        let late = Shared<[Int]>([])
        let lateSubscription = Shared<Subscription?>(nil)
        let source = harness.source
        let first = source.observe { value in
            if value == 1 { lateSubscription.value = source.observe { late.value.append($0) } }
        }
        harness.send(1)
        harness.send(2)
        // A replaying source hands the late observer the value that was current when it subscribed.
        let expected = harness.replayed == nil ? [2] : [1, 2]
        #expect(late.value == expected)
        withExtendedLifetime(first) {}
    }

    @Test("value reads the newest value at once while its delivery is still queued",
          arguments: [SourceKind.behaviorSubject, .behaviorRelay])
    func valueIsCurrentDuringQueuedDelivery(kind: SourceKind) {
        let harness = kind.make(initial: 0)
        let send = harness.send
        let current = harness.current!
        let log = Shared<[String]>([])
        let a = harness.source.observe { value in
            if value == 1 {
                send(2)
                log.value.append("A sent 2, value \(current())")
            }
        }
        let b = harness.source.observe { value in
            log.value.append("B got \(value), value \(current())")
        }
        send(1)
        #expect(log.value == [
            "B got 0, value 0",
            "A sent 2, value 2",
            "B got 1, value 2",
            "B got 2, value 2",
        ])
        withExtendedLifetime((a, b)) {}
    }
}

@Suite("Subscribing while other threads send")
struct SubscribeWhileSendingTests {
    @Test("an observer that joins while another thread sends receives an unbroken run of values",
          arguments: SourceKind.allCases)
    func unbrokenRun(kind: SourceKind) {
        let harness = kind.make(initial: 0)
        let send = harness.send
        let sent = 5_000
        let runs = Shared<[Shared<[Int]>]>([])
        let keep = Shared<[Subscription]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            if lane == 0 {
                for value in 1...sent { send(value) }
            } else {
                for _ in 0..<50 {
                    let seen = Shared<[Int]>([])
                    runs.value.append(seen)
                    keep.value.append(harness.source.observe { seen.value.append($0) })
                }
            }
        }
        var broken = 0
        for run in runs.value {
            let values = run.value
            // Each value follows the one before: nothing lost, nothing repeated, nothing out of order.
            if zip(values, values.dropFirst()).contains(where: { $1 != $0 + 1 }) { broken += 1 }
            if let last = values.last, last != sent { broken += 1 }
            // A replaying source hands over the value that was current when the observer joined.
            if harness.replayed != nil, values.isEmpty { broken += 1 }
        }
        #expect(broken == 0)
        withExtendedLifetime(keep.value) {}
    }
}
