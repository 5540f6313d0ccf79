import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Lifetime and take(during:)")
struct LifetimeTests {
    @Test("a stream taken during a lifetime completes when the token ends it, and lets go of its source")
    func endsWithToken() {
        let source = PublishSubject<Int>()
        let (lifetime, token) = Lifetime.make()
        let recorder = Recorder(source.take(during: lifetime))
        source.send(1)
        #expect(!lifetime.hasEnded)
        token.end()
        source.send(2)
        #expect(lifetime.hasEnded)
        #expect(recorder.events == [.next(1), .completed])
        #expect(source.core.observerCount == 0)
        token.end()                     // a second end does nothing
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test("releasing the token ends the lifetime")
    func endsWhenTokenReleased() {
        let source = PublishSubject<Int>()
        var pair: (lifetime: Lifetime, token: Lifetime.Token)? = Lifetime.make()
        let lifetime = pair!.lifetime
        let recorder = Recorder(source.take(during: lifetime))
        source.send(1)
        pair = nil
        source.send(2)
        #expect(lifetime.hasEnded)
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test("a lifetime that already ended completes the stream at once, without subscribing the source")
    func alreadyEnded() {
        let subscribed = Shared(0)
        let source = Observable<Int> { observer in
            subscribed.value += 1
            observer(.next(1))
            return .empty
        }
        let (lifetime, token) = Lifetime.make()
        token.end()
        let recorder = Recorder(source.take(during: lifetime))
        #expect(recorder.events == [.completed])
        #expect(subscribed.value == 0)
        #expect(Recorder(lifetime.ended.map { 0 }).events == [.next(0), .completed])
    }

    @Test("ended sends one value and completes, also to late subscribers")
    func endedReplays() {
        let (lifetime, token) = Lifetime.make()
        let early = Shared<[String]>([])
        let subscription = lifetime.ended.subscribe(onNext: { early.value.append("ended") }, onCompleted: { early.value.append("done") })
        #expect(early.value.isEmpty)
        token.end()
        #expect(early.value == ["ended", "done"])
        let late = Shared<[String]>([])
        let lateSubscription = lifetime.ended.subscribe(onNext: { late.value.append("ended") }, onCompleted: { late.value.append("done") })
        #expect(late.value == ["ended", "done"])
        withExtendedLifetime((subscription, lateSubscription)) {}
    }

    @Test("ending from many threads at once completes each stream once")
    func concurrentEnds() {
        for _ in 0..<50 {
            let source = PublishSubject<Int>()
            let (lifetime, token) = Lifetime.make()
            let recorder = Recorder(source.take(during: lifetime))
            DispatchQueue.concurrentPerform(iterations: 4) { lane in
                if lane == 0 { for value in 0..<100 { source.send(value) } } else { token.end() }
            }
            #expect(recorder.isCompleted)
            #expect(recorder.events.filter { $0 == .completed }.count == 1)
            #expect(recorder.events.last == .completed)     // no value after the completion
            source.send(1_000)
            #expect(recorder.events.last == .completed)
        }
    }

    @Test("what the stream captured is released when the lifetime ends, though the subscription is kept")
    func releasesCaptures() {
        let source = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        let (lifetime, ending) = Lifetime.make()
        let subscription = source.map { [token] in $0 + token!.id }.take(during: lifetime).observe { _ in }
        token = nil
        source.send(1)
        #expect(weakToken != nil)
        ending.end()
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }
}
