import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("PublishSubject")
struct PublishSubjectTests {
    @Test("each observer receives the values sent after it subscribed")
    func valuesAfterSubscription() {
        let subject = PublishSubject<Int>()
        subject.send(0)
        let early = Recorder(subject)
        subject.send(1)
        let late = Recorder(subject)
        subject.send(2)
        #expect(early.values == [1, 2])
        #expect(late.values == [2])
    }

    @Test("observers are called in subscription order")
    func subscriptionOrder() {
        let subject = PublishSubject<Int>()
        let log = Shared<[String]>([])
        let subscriptions = (0..<5).map { index in subject.observe { _ in log.value.append("o\(index)") } }
        subject.send(1)
        #expect(log.value == ["o0", "o1", "o2", "o3", "o4"])
        withExtendedLifetime(subscriptions) {}
    }

    @Test("sends after complete are ignored and a new subscriber receives only completed")
    func afterComplete() {
        let subject = PublishSubject<Int>()
        let before = Recorder(subject)
        subject.send(1)
        subject.complete()
        subject.send(2)
        subject.fail(TestError())
        subject.complete()
        let after = Recorder(subject)
        #expect(before.events == [.next(1), .completed])
        #expect(after.events == [.completed])
    }

    @Test("sends after fail are ignored and a new subscriber receives only the error")
    func afterFail() {
        let subject = PublishSubject<Int>()
        let before = Recorder(subject)
        subject.send(1)
        subject.fail(TestError(code: 3))
        subject.send(2)
        subject.complete()
        let after = Recorder(subject)
        #expect(before.events == [.next(1), .error(TestError(code: 3))])
        #expect(after.events == [.error(TestError(code: 3))])
    }

    @Test("a send queued from inside an observer before complete arrives before completed")
    func reentrantSendThenComplete() {
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject)
        let trigger = subject.observe { value in
            if value == 1 {
                subject.send(2)
                subject.complete()
                subject.send(3)
            }
        }
        subject.send(1)
        #expect(recorder.events == [.next(1), .next(2), .completed])
        withExtendedLifetime(trigger) {}
    }

    @Test("completion releases what the observers captured")
    func completionReleases() {
        let subject = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = subject.observe { [token] _ in _ = token }
        token = nil
        #expect(weakToken != nil)
        subject.complete()
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }

    @Test("a cancelled observer no longer receives values, the others still do")
    func cancelOne() {
        let subject = PublishSubject<Int>()
        let kept = Recorder(subject)
        let dropped = Recorder(subject)
        subject.send(1)
        dropped.cancel()
        subject.send(2)
        #expect(kept.values == [1, 2])
        #expect(dropped.values == [1])
    }
}
