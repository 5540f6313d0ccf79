import Dispatch
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("bind(to:)")
struct BindTests {
    @Test("binding to a PublishRelay forwards every value")
    func publishRelay() {
        let source = PublishSubject<Int>()
        let relay = PublishRelay<Int>()
        let recorder = Recorder(relay)
        let binding = source.bind(to: relay)
        source.send(1)
        source.send(2)
        #expect(recorder.values == [1, 2])
        withExtendedLifetime(binding) {}
    }

    @Test("binding to a BehaviorRelay makes each value the current value")
    func behaviorRelay() {
        let source = PublishSubject<String>()
        let relay = BehaviorRelay("start")
        let recorder = Recorder(relay)
        let binding = source.bind(to: relay)
        source.send("a")
        #expect(relay.value == "a")
        #expect(recorder.values == ["start", "a"])
        withExtendedLifetime(binding) {}
    }

    @Test("a terminal event ends the binding, not the relay", arguments: [true, false])
    func terminalEndsBindingOnly(fails: Bool) {
        let source = PublishSubject<Int>()
        let relay = BehaviorRelay(0)
        let recorder = Recorder(relay)
        let binding = source.bind(to: relay)
        source.send(1)
        if fails { source.fail(TestError()) } else { source.complete() }
        relay.accept(2)
        #expect(recorder.events == [.next(0), .next(1), .next(2)])
        withExtendedLifetime(binding) {}
    }

    @Test("cancelling the binding stops forwarding", arguments: [true, false])
    func cancelStops(behavior: Bool) {
        let source = PublishSubject<Int>()
        let publish = PublishRelay<Int>()
        let current = BehaviorRelay(0)
        let recorder = behavior ? Recorder(current) : Recorder(publish)
        let binding = behavior ? source.bind(to: current) : source.bind(to: publish)
        source.send(1)
        binding.cancel()
        source.send(2)
        #expect(recorder.values == (behavior ? [0, 1] : [1]))
    }

    @Test("the binding does not keep the relay alive after it ends", arguments: Ending.allCases)
    func releasesRelay(ending: Ending) {
        let source = PublishSubject<Int>()
        var relay: PublishRelay<Int>? = PublishRelay()
        weak let weakRelay = relay
        var binding: Subscription? = source.bind(to: relay!)
        relay = nil
        source.send(1)
        #expect(weakRelay != nil)
        switch ending {
        case .cancel: binding?.cancel()
        case .complete: source.complete()
        case .fail: source.fail(TestError())
        case .release: binding = nil
        }
        #expect(weakRelay == nil)
        withExtendedLifetime(binding) {}
    }
}

/// A binding target of the kind a user writes: one line of a status bar, which writes what it is given
/// to a log the test keeps (so the test can read it after the line is released).
final class StatusLine: BindingTarget, Sendable {
    final class Log: Sendable {
        private let written = Mutex<[String]>([])
        func append(_ line: String) { written.withLock { $0.append(line) } }
        var lines: [String] { written.withLock { $0 } }
    }

    let log: Log

    init(log: Log = Log()) { self.log = log }

    func accept(_ line: String) {
        log.append(line)
    }
}

@Suite("bind(to:) a BindingTarget of your own")
struct BindingTargetTests {
    @Test("a target of your own receives every value, in order")
    func customTargetInOrder() {
        let source = PublishSubject<String>()
        let target = StatusLine()
        let binding = source.bind(to: target)
        for line in ["connecting", "online", "3 new", "online"] { source.send(line) }
        #expect(target.log.lines == ["connecting", "online", "3 new", "online"])
        withExtendedLifetime(binding) {}
    }

    @Test("a target receives the current value of a replaying source first")
    func customTargetReplay() {
        let source = BehaviorRelay("idle")
        let target = StatusLine()
        let binding = source.bind(to: target)
        source.accept("busy")
        #expect(target.log.lines == ["idle", "busy"])
        withExtendedLifetime(binding) {}
    }

    @Test("a terminal event ends the binding without reaching the target", arguments: [true, false])
    func terminalEndsBinding(fails: Bool) {
        let source = PublishSubject<String>()
        let log = StatusLine.Log()
        let target = StatusLine(log: log)
        let binding = source.bind(to: target)
        source.send("a")
        if fails { source.fail(TestError()) } else { source.complete() }
        source.send("b")
        target.accept("written by the program")
        #expect(log.lines == ["a", "written by the program"],
                "the stream's end must reach the target as nothing at all, and later values not at all")
        withExtendedLifetime(binding) {}
    }

    @Test("ending the binding stops delivery and releases the target", arguments: Ending.allCases)
    func endingReleasesTarget(ending: Ending) {
        let source = PublishSubject<String>()
        let log = StatusLine.Log()
        var target: StatusLine? = StatusLine(log: log)
        weak let weakTarget = target
        var binding: Subscription? = source.bind(to: target!)
        target = nil
        source.send("kept")
        #expect(weakTarget != nil, "the binding keeps its target alive while it lasts")
        switch ending {
        case .cancel: binding?.cancel()
        case .complete: source.complete()
        case .fail: source.fail(TestError())
        case .release: binding = nil
        }
        #expect(weakTarget == nil, "an ended binding must release its target")
        source.send("dropped")
        #expect(log.lines == ["kept"])
        withExtendedLifetime(binding) {}
    }

    @Test("cancelling the binding stops delivery to a target that lives on")
    func cancelStopsDelivery() {
        let source = PublishSubject<String>()
        let target = StatusLine()
        let binding = source.bind(to: target)
        source.send("a")
        binding.cancel()
        source.send("b")
        #expect(target.log.lines == ["a"])
    }

    @Test("a target typed as any BindingTarget binds like a concrete one")
    func existentialTarget() {
        let source = PublishSubject<Int>()
        let relay = PublishRelay<Int>()
        let property = MutableProperty(0)
        let recorder = Recorder(relay)
        let targets: [any BindingTarget<Int>] = [relay, property]
        let bindings = targets.map { source.bind(to: $0) }
        source.send(7)
        #expect(recorder.values == [7])
        #expect(property.value == 7)
        withExtendedLifetime(bindings) {}
    }

    @Test("one binding calls accept one value at a time, though values are sent from many threads")
    func oneAtATime() {
        final class Slow: BindingTarget, Sendable {
            let detector = OverlapDetector()
            let count = AtomicCounter()
            func accept(_ value: Int) {
                detector.enter {
                    var sum = 0.0
                    for step in 0..<200 { sum += Double(value + step).squareRoot() }
                    if sum < 0 { count.increment() }
                    count.increment()
                }
            }
        }
        let source = PublishSubject<Int>()
        let target = Slow()
        let binding = source.bind(to: target)
        DispatchQueue.concurrentPerform(iterations: 2_000) { source.send($0) }
        #expect(target.detector.overlaps == 0)
        #expect(target.count.value == 2_000)
        withExtendedLifetime(binding) {}
    }
}
