import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// A source that fails while it is being subscribed, for its first `failures` subscriptions (all of them
/// when `nil`), then sends its attempt's number and stays open; it counts the subscriptions it made and
/// those still live (made and not yet cancelled).
final class SynchronousFailures: Sendable {
    let failures: Int?
    let made = Atomic<Int>(0)
    let live = Atomic<Int>(0)

    init(failures: Int?) { self.failures = failures }

    var stream: Observable<Int> {
        Observable { [self] observer in
            let attempt = made.add(1, ordering: .relaxed).newValue
            live.add(1, ordering: .relaxed)
            let subscription = Subscription { [self] in live.subtract(1, ordering: .relaxed) }
            if let failures, attempt > failures {
                observer(.next(attempt))
            } else {
                observer(.error(TestError(code: attempt)))
            }
            return subscription
        }
    }

    var madeCount: Int { made.load(ordering: .relaxed) }
    var liveCount: Int { live.load(ordering: .relaxed) }
}

@Suite("retry: a source that fails while being subscribed")
struct RetrySubscriptionTests {
    @Test("retry(_:) that gives up leaves no subscription to the source behind", arguments: [0, 1, 3, 100])
    func givesUp(count: Int) {
        let source = SynchronousFailures(failures: nil)
        let recorder = Recorder(source.stream.retry(count))
        #expect(recorder.events == [.error(TestError(code: count + 1))])
        #expect(source.madeCount == count + 1)
        #expect(source.liveCount == 0)
        recorder.cancel()
        #expect(source.liveCount == 0)
    }

    @Test("retry(_:) that succeeds keeps exactly one subscription, and none once cancelled")
    func succeeds() {
        let source = SynchronousFailures(failures: 3)
        let recorder = Recorder(source.stream.retry(5))
        #expect(recorder.events == [.next(4)])
        #expect(source.madeCount == 4)
        #expect(source.liveCount == 1)
        recorder.cancel()
        #expect(source.liveCount == 0)
    }

    @Test("retry(_:delay:scheduler:) that gives up leaves no subscription behind, nor work on the scheduler")
    func delayedGivesUp() {
        let scheduler = TestScheduler()
        let source = SynchronousFailures(failures: nil)
        let recorder = Recorder(source.stream.retry(3, delay: .seconds(1), scheduler: scheduler))
        scheduler.run()
        #expect(recorder.events == [.error(TestError(code: 4))])
        #expect(source.madeCount == 4)
        #expect(source.liveCount == 0)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("retry(_:delay:scheduler:) cancelled while it waits leaves no subscription behind")
    func delayedCancelledWhileWaiting() {
        let scheduler = TestScheduler()
        let source = SynchronousFailures(failures: nil)
        let recorder = Recorder(source.stream.retry(3, delay: .seconds(1), scheduler: scheduler))
        scheduler.advance(by: .seconds(1))
        #expect(source.madeCount == 2)
        recorder.cancel()
        scheduler.run()
        #expect(source.madeCount == 2)
        #expect(source.liveCount == 0)
        #expect(scheduler.pendingWorkCount == 0)
        #expect(recorder.events.isEmpty)
    }

    @Test("retry(when:) whose trigger gives up leaves no subscription to the source or the trigger behind")
    func whenGivesUp() {
        let source = SynchronousFailures(failures: nil)
        let trigger = PublishSubject<Void>()
        let recorder = Recorder(source.stream.retry(when: { errors in
            errors.flatMap { error -> Observable<Void> in
                guard let failure = error as? TestError, failure.code < 3 else { return .failure(error) }
                return .just(())
            }.merge(with: trigger.asObservable())
        }))
        #expect(recorder.events == [.error(TestError(code: 3))])
        #expect(source.madeCount == 3)
        #expect(source.liveCount == 0)
        #expect(trigger.core.observers.members.count == 0)
    }
}
