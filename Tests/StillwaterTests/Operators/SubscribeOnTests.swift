import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("subscribe(on:)", .timeLimit(.minutes(5)))
struct SubscribeOnTests {
    @Test("subscribe(on:) subscribes when the scheduler runs, and forwards events as they come")
    func subscribesOnScheduler() {
        let scheduler = TestScheduler()
        let source = scheduler.cold("-a-b|", values: ["a": 1, "b": 2])
        scheduler.advance(to: .milliseconds(2))
        let recorder = Recorder(source.subscribe(on: scheduler), scheduler: scheduler)
        #expect(source.subscriptions.isEmpty)
        scheduler.run()
        #expect(source.subscriptions == [.init(subscribed: .milliseconds(2))])
        #expect(recorder.timeline == [.next(.milliseconds(3), 1), .next(.milliseconds(5), 2), .completed(.milliseconds(6))])
    }

    @Test("cancelling before the subscription was made means the source is never subscribed")
    func cancelBeforeSubscribing() {
        let scheduler = TestScheduler()
        let source = scheduler.cold("-a|", values: ["a": 1])
        let recorder = Recorder(source.subscribe(on: scheduler), scheduler: scheduler)
        recorder.cancel()
        #expect(scheduler.pendingWorkCount == 0)
        scheduler.run()
        #expect(source.subscriptions.isEmpty)
        #expect(recorder.events.isEmpty)
    }

    @Test("cancelling later stops delivery at once and cancels the source's subscription on the scheduler")
    func cancelOnScheduler() {
        let scheduler = TestScheduler()
        let source = scheduler.cold("-a-b|", values: ["a": 1, "b": 2])
        let recorder = Recorder(source.subscribe(on: scheduler), scheduler: scheduler)
        scheduler.advance(to: .milliseconds(2))
        recorder.cancel()
        #expect(source.subscriptions == [.init(subscribed: .zero)])
        scheduler.advance()
        #expect(source.subscriptions == [.init(subscribed: .zero, cancelled: .milliseconds(2))])
        scheduler.run()
        #expect(recorder.values == [1])
    }

    @Test("subscribe(on:) does the subscribing on the scheduler's queue")
    func subscribesOnQueue() async {
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "subscribe-on")
        queue.setSpecific(key: key, value: "subscribe-on")
        let (labels, continuation) = AsyncStream<String?>.makeStream()
        let source = Observable<Int> { observer in
            continuation.yield(DispatchQueue.getSpecific(key: key))
            observer(.completed)
            return .empty
        }
        let subscription = source.subscribe(on: .queue(queue)).observe { _ in }
        var iterator = labels.makeAsyncIterator()
        #expect(await iterator.next() == "subscribe-on")
        withExtendedLifetime(subscription) {}
    }

    @Test("subscribe(on:) the immediate scheduler subscribes at once")
    func immediate() {
        #expect(events(of: { $0.subscribe(on: .immediate) }, sending: [1, 2]) == [.next(1), .next(2), .completed])
    }
}
