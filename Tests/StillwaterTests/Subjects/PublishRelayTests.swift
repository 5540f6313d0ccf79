import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("PublishRelay")
struct PublishRelayTests {
    @Test("each observer receives the values accepted after it subscribed")
    func valuesAfterSubscription() {
        let relay = PublishRelay<String>()
        relay.accept("lost")
        let first = Recorder(relay)
        relay.accept("a")
        let second = Recorder(relay)
        relay.accept("b")
        #expect(first.values == ["a", "b"])
        #expect(second.values == ["b"])
    }

    @Test("a relay never sends a terminal event")
    func neverEnds() {
        let relay = PublishRelay<Int>()
        let recorder = Recorder(relay)
        for value in 0..<10 { relay.accept(value) }
        #expect(recorder.events == (0..<10).map(Event.next))
        #expect(!recorder.isCompleted && recorder.error == nil)
    }

    @Test("cancelling releases what the observer captured")
    func cancelReleases() {
        let relay = PublishRelay<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = relay.observe { [token] _ in _ = token }
        token = nil
        relay.accept(1)
        #expect(weakToken != nil)
        subscription.cancel()
        #expect(weakToken == nil)
    }

    @Test("an observer that cancels itself mid-delivery receives nothing after")
    func selfCancel() {
        let relay = PublishRelay<Int>()
        let seen = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = relay.observe { value in
            seen.value.append(value)
            relay.accept(value + 1)
            subscription.value?.cancel()
        }
        relay.accept(1)
        relay.accept(10)
        #expect(seen.value == [1])
    }
}
