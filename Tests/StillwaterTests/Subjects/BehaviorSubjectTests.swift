import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("BehaviorSubject")
struct BehaviorSubjectTests {
    @Test("a new observer receives the current value first, then every change")
    func replaysCurrent() {
        let subject = BehaviorSubject(1)
        let first = Recorder(subject)
        subject.send(2)
        let second = Recorder(subject)
        subject.send(3)
        #expect(first.values == [1, 2, 3])
        #expect(second.values == [2, 3])
    }

    @Test("value reads the initial value, then the latest sent")
    func valueReadsLatest() {
        let subject = BehaviorSubject("a")
        #expect(subject.value == "a")
        subject.send("b")
        #expect(subject.value == "b")
    }

    @Test("after complete sends are ignored, value keeps the last value, and a new subscriber receives only completed")
    func afterComplete() {
        let subject = BehaviorSubject(1)
        let before = Recorder(subject)
        subject.send(2)
        subject.complete()
        subject.send(3)
        let after = Recorder(subject)
        #expect(before.events == [.next(1), .next(2), .completed])
        #expect(after.events == [.completed])
        #expect(subject.value == 2)
    }

    @Test("after fail a new subscriber receives only the error")
    func afterFail() {
        let subject = BehaviorSubject(1)
        subject.fail(TestError(code: 4))
        subject.send(5)
        let after = Recorder(subject)
        #expect(after.events == [.error(TestError(code: 4))])
        #expect(subject.value == 1)
    }

    @Test("an observer that cancels itself while receiving the current value receives nothing after")
    func cancelDuringReplay() {
        let subject = BehaviorSubject(1)
        let seen = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = subject.observe { value in
            seen.value.append(value)
            if value == 2 { subscription.value?.cancel() }
        }
        subject.send(2)
        subject.send(3)
        #expect(seen.value == [1, 2])
    }

    @Test("completion releases what the observers captured")
    func completionReleases() {
        let subject = BehaviorSubject(0)
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = subject.observe { [token] _ in _ = token }
        token = nil
        #expect(weakToken != nil)
        subject.complete()
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }
}
