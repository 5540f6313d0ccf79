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
