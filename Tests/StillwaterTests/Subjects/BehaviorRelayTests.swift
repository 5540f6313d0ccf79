import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("BehaviorRelay")
struct BehaviorRelayTests {
    @Test("a new observer receives the current value first, then every change")
    func replaysCurrent() {
        let relay = BehaviorRelay("Inbox")
        let first = Recorder(relay)
        relay.accept("Inbox (1)")
        let second = Recorder(relay)
        #expect(first.values == ["Inbox", "Inbox (1)"])
        #expect(second.values == ["Inbox (1)"])
        #expect(!first.isCompleted)
    }

    @Test("value reads the latest accepted value", arguments: [[1], [1, 2, 3], [5, 5]])
    func valueReadsLatest(accepted: [Int]) {
        let relay = BehaviorRelay(0)
        for value in accepted { relay.accept(value) }
        #expect(relay.value == accepted.last)
    }

    @Test("equal values are delivered again (a relay does not deduplicate)")
    func noDeduplication() {
        let relay = BehaviorRelay(1)
        let recorder = Recorder(relay)
        relay.accept(1)
        relay.accept(1)
        #expect(recorder.values == [1, 1, 1])
    }

    @Test("cancelling releases what the observer captured")
    func cancelReleases() {
        let relay = BehaviorRelay(0)
        var token: Token? = Token()
        weak let weakToken = token
        var subscription: Subscription? = relay.observe { [token] _ in _ = token }
        token = nil
        #expect(weakToken != nil)
        subscription = nil
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }
}
