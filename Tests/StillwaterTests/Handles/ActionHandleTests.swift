import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

/// The props of a child component: a value and a callback, compared with synthesized `Equatable`.
private struct RowProps: Equatable {
    var title: String
    var onTap: ActionHandle<Void>
}

@Suite("ActionHandle")
struct ActionHandleTests {
    // MARK: Identity

    @Test("two handles are never equal, and a handle equals itself")
    func identity() {
        let first = ActionHandle<Void>()
        let second = ActionHandle<Void>()
        #expect(first != second)
        #expect(first == first)
        #expect(Set([first, second, first]).count == 2)
        #expect(first.hashValue == first.hashValue)
    }

    @Test("a struct of String and ActionHandle<Void> compares equal when rebuilt with the same handle")
    func synthesizedEquatable() {
        let onTap = ActionHandle<Void>()
        let yesterday = RowProps(title: "Milk", onTap: onTap)
        let today = RowProps(title: "Milk", onTap: onTap)
        #expect(today == yesterday)
        #expect(RowProps(title: "Bread", onTap: onTap) != yesterday, "a changed title must still count")
        #expect(RowProps(title: "Milk", onTap: ActionHandle()) != yesterday, "a new handle is a different callback")
    }

    // MARK: Calling

    @Test("each observer receives the calls made after it subscribed, with their parameters")
    func deliversCalls() {
        let onSelect = ActionHandle<Int>()
        onSelect(0)
        let first = Recorder(onSelect)
        onSelect(1)
        let second = Recorder(onSelect)
        onSelect(2)
        #expect(first.values == [1, 2])
        #expect(second.values == [2])
        #expect(!first.isCompleted && first.error == nil)
    }

    @Test("a Void handle is called with ()")
    func voidCall() {
        let onTap = ActionHandle<Void>()
        let taps = Shared(0)
        let subscription = onTap.observe { taps.value += 1 }
        onTap()
        onTap(())
        #expect(taps.value == 2)
        withExtendedLifetime(subscription) {}
    }

    @Test("operators work on a handle: map turns calls into actions")
    func operators() {
        enum RowAction: Equatable { case toggle(Int) }
        let onToggle = ActionHandle<Int>()
        let recorder = Recorder(onToggle.map { RowAction.toggle($0) }.filter { $0 != .toggle(0) })
        for id in [3, 0, 5] { onToggle(id) }
        #expect(recorder.values == [.toggle(3), .toggle(5)])
    }

    @Test("bind(to:) calls the handle with every value of a stream, and ends with the stream")
    func bindIntoHandle() {
        let keys = PublishSubject<Int>()
        let onSelect = ActionHandle<Int>()
        let recorder = Recorder(onSelect)
        let binding = keys.bind(to: onSelect)
        keys.send(1)
        keys.send(2)
        keys.complete()
        keys.send(3)
        onSelect(4)
        #expect(recorder.values == [1, 2, 4])
        #expect(!recorder.isCompleted, "the stream's completion must not end the handle")
        withExtendedLifetime(binding) {}
    }

    @Test("cancelling the binding stops the calls it made")
    func cancelBinding() {
        let keys = PublishSubject<Int>()
        let onSelect = ActionHandle<Int>()
        let recorder = Recorder(onSelect)
        let binding = keys.bind(to: onSelect)
        keys.send(1)
        binding.cancel()
        keys.send(2)
        #expect(recorder.values == [1])
    }

    // MARK: Nobody observing

    @Test("calling a handle nobody observes is a no-op: nothing is delivered later, nothing is kept")
    func unobservedCallIsNoOp() {
        let onOpen = ActionHandle<Token>()
        var token: Token? = Token(1)
        weak let weakToken = token
        onOpen(token!)
        token = nil
        #expect(weakToken == nil, "an unobserved call must not keep its parameter")
        let recorder = Recorder(onOpen)
        #expect(recorder.events.isEmpty, "a later observer must not receive an earlier call")
        onOpen(Token(2))
        #expect(recorder.values.map(\.id) == [2])
    }

    @Test("calling a handle whose observers all left delivers nothing")
    func callAfterObserversLeft() {
        let onTap = ActionHandle<Void>()
        let taps = Shared(0)
        let first = onTap.observe { taps.value += 1 }
        var second: Subscription? = onTap.observe { taps.value += 1 }
        onTap()
        first.cancel()
        second = nil
        for _ in 0..<10 { onTap() }
        #expect(taps.value == 2)
        withExtendedLifetime(second) {}
    }

    // MARK: Memory

    @Test("a handle does not keep an observer's captures alive after it cancels", arguments: [Ending.cancel, .release])
    func releasesCaptures(ending: Ending) {
        let onTap = ActionHandle<Void>()
        var token: Token? = Token()
        weak let weakToken = token
        var subscription: Subscription? = onTap.observe { [token] in _ = token }
        token = nil
        onTap()
        #expect(weakToken != nil, "a live observer keeps what it captured")
        if ending == .cancel { subscription?.cancel() } else { subscription = nil }
        #expect(weakToken == nil, "the handle must release the observer's captures after \(ending)")
        onTap()
        withExtendedLifetime((onTap, subscription)) {}
    }

    @Test("a parent that owns a handle and observes it is freed once the subscription is cancelled")
    func parentCycleBrokenByCancel() {
        final class Parent {
            let onTap = ActionHandle<Void>()
            var taps = 0
            var subscription: Subscription?
            init() { subscription = onTap.observe { self.taps += 1 } }   // a cycle until cancelled
        }
        var parent: Parent? = Parent()
        weak let weakParent = parent
        let child = parent!.onTap   // the child holds only the handle
        child()
        #expect(parent?.taps == 1)
        parent?.subscription?.cancel()
        parent = nil
        #expect(weakParent == nil)
        child()   // the parent is gone; the call is a no-op
    }

    @Test("a handle is freed when nothing holds it, even with observers attached")
    func handleFreed() {
        var onTap: ActionHandle<Void>? = ActionHandle()
        weak let weakHandle = onTap
        let subscription = onTap!.observe { }
        onTap = nil
        #expect(weakHandle == nil)
        subscription.cancel()
    }

    // MARK: Concurrency and reentrancy

    @Test("calls from many threads reach observers one at a time and in one order")
    func manyThreads() {
        let onSelect = ActionHandle<Int>()
        let probe = OrderProbe(onSelect)
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for index in 0..<5_000 { onSelect(lane * 5_000 + index) }
        }
        probe.expectSerialSingleOrder(lanes: 4, callsPerLane: 5_000)
    }

    @Test("calls from detached tasks reach observers one at a time and in one order")
    func detachedTasks() async {
        let onSelect = ActionHandle<Int>()
        let probe = OrderProbe(onSelect)
        let running = (0..<8).map { lane in
            Task.detached {
                for index in 0..<1_000 {
                    onSelect(lane * 1_000 + index)
                    if index % 100 == 0 { await Task.yield() }
                }
            }
        }
        for task in running { await task.value }
        probe.expectSerialSingleOrder(lanes: 8, callsPerLane: 1_000)
    }

    @Test("a call made from inside an observer is queued: A and B see A1, B1, A2, B2")
    func reentrantCall() {
        let onSelect = ActionHandle<Int>()
        let log = Shared<[String]>([])
        let a = onSelect.observe { value in
            log.value.append("A\(value)")
            if value == 1 { onSelect(2) }
        }
        let b = onSelect.observe { value in log.value.append("B\(value)") }
        onSelect(1)
        #expect(log.value == ["A1", "B1", "A2", "B2"])
        withExtendedLifetime((a, b)) {}
    }

    @Test("a handle of a Sendable parameter is Sendable; it crosses into a task")
    func sendable() async {
        let onTap = ActionHandle<Void>()
        let taps = AtomicCounter()
        let subscription = onTap.observe { taps.increment() }
        await Task.detached { onTap() }.value
        #expect(taps.value == 1)
        withExtendedLifetime(subscription) {}
    }
}

/// Two observers of a handle that record what they receive, in plain (unlocked) arrays, and detect overlap.
private struct OrderProbe {
    let detector = OverlapDetector()
    let first = Shared<[Int]>([])
    let second = Shared<[Int]>([])
    let subscriptions: [Subscription]

    init(_ handle: ActionHandle<Int>) {
        let (detector, first, second) = (detector, first, second)
        subscriptions = [
            handle.observe { value in detector.enter { first.value.append(value) } },
            handle.observe { value in detector.enter { second.value.append(value) } },
        ]
    }

    /// Checks that no delivery overlapped another, that both observers saw every call in one order, and
    /// that each lane's calls (lane * callsPerLane + index) kept their order.
    func expectSerialSingleOrder(lanes: Int, callsPerLane: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(detector.overlaps == 0, sourceLocation: sourceLocation)
        #expect(first.value.count == lanes * callsPerLane, sourceLocation: sourceLocation)
        #expect(first.value == second.value, "both observers must see one order", sourceLocation: sourceLocation)
        for lane in 0..<lanes {
            let fromLane = first.value.filter { $0 / callsPerLane == lane }
            #expect(fromLane == Array(lane * callsPerLane..<(lane + 1) * callsPerLane), "lane \(lane) reordered",
                    sourceLocation: sourceLocation)
        }
        withExtendedLifetime(subscriptions) {}
    }
}
