import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("withLatestFrom")
struct WithLatestFromTests {
    @Test("each value takes the other stream's latest value; values before the other's first send nothing")
    func latestValues() {
        let other = PublishSubject<Int>()
        let recorded = events(of: { $0.withLatestFrom(other) { $0 * 100 + $1 } }, sending: [1], then: nil)
        #expect(recorded.isEmpty)
        let taps = PublishSubject<Int>()
        let recorder = Recorder(taps.withLatestFrom(other) { $0 * 100 + $1 })
        taps.send(1)
        other.send(7)
        other.send(8)
        #expect(recorder.values.isEmpty, "the other stream's values alone send nothing")
        taps.send(2)
        taps.send(3)
        other.send(9)
        taps.send(4)
        #expect(recorder.values == [208, 308, 409])
    }

    @Test("withLatestFrom(_:) sends the other stream's value itself")
    func withoutSelector() {
        let other = BehaviorSubject("a")
        let taps = PublishSubject<Int>()
        let recorder = Recorder(taps.withLatestFrom(other))
        taps.send(1)
        other.send("b")
        taps.send(2)
        #expect(recorder.values == ["a", "b"])
    }

    @Test("the other stream is subscribed first, so a replayed value serves this stream's first value")
    func otherSubscribedFirst() {
        let recorded = Recorder(Observable.of(1, 2).withLatestFrom(BehaviorSubject(5)) { $0 + $1 })
        #expect(recorded.values == [6, 7])
        #expect(recorded.isCompleted)
    }

    @Test("an empty source completes")
    func empty() { expectCompletesWhenEmpty { $0.withLatestFrom(BehaviorSubject(0)) { $0 + $1 } } }

    @Test("this stream's completion completes the result and cancels the other")
    func completion() {
        let other = BehaviorSubject(10)
        #expect(events(of: { $0.withLatestFrom(other) { $0 + $1 } }, sending: [1, 2]) ==
            [.next(11), .next(12), .completed])
        #expect(other.core.observerCount == 0)
    }

    @Test("the other stream's completion does not end the result; its last value stays the latest")
    func otherCompletes() {
        let taps = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        let recorder = Recorder(taps.withLatestFrom(other) { $0 + $1 })
        other.send(10)
        other.complete()
        taps.send(1)
        taps.send(2)
        #expect(recorder.events == [.next(11), .next(12)])
        taps.complete()
        #expect(recorder.events == [.next(11), .next(12), .completed])
    }

    @Test("this stream's failure fails the result")
    func error() {
        expectForwardsError({ $0.withLatestFrom(BehaviorSubject(10)) { $0 + $1 } }, sending: [1], expecting: [11])
    }

    @Test("the other stream's failure fails the result and cancels this stream")
    func otherFails() {
        let taps = PublishSubject<Int>()
        let other = BehaviorSubject(10)
        let recorder = Recorder(taps.withLatestFrom(other) { $0 + $1 })
        taps.send(1)
        other.fail(TestError(code: 3))
        taps.send(2)
        #expect(recorder.events == [.next(11), .error(TestError(code: 3))])
        #expect(taps.core.observerCount == 0)
    }

    @Test("withLatestFrom stops when cancelled mid-stream, and leaves both streams")
    func cancel() {
        expectStopsWhenCancelled { $0.withLatestFrom(BehaviorSubject(0)) { $0 + $1 } }
        let taps = PublishSubject<Int>()
        let other = BehaviorSubject(0)
        let recorder = Recorder(taps.withLatestFrom(other))
        recorder.cancel()
        #expect(taps.core.observerCount == 0)
        #expect(other.core.observerCount == 0)
    }

    @Test("withLatestFrom releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        let other = BehaviorSubject(1)
        expectReleasesCaptures(ending) { source, token in
            source.withLatestFrom(other) { [token] in $0 + $1 + token.id }
        }
    }

    @Test("a value sent to either stream from inside the observer is delivered after the current one")
    func reentrant() {
        let taps = PublishSubject<Int>()
        let other = BehaviorSubject(0)
        let received = Shared<[Int]>([])
        let subscription = taps.withLatestFrom(other) { $0 * 10 + $1 }.observe { value in
            received.value.append(value)
            if value < 30 {
                other.send(value / 10 + 1)
                taps.send(value / 10 + 1)
            }
            received.value.append(-value)
        }
        taps.send(1)
        #expect(received.value == [10, -10, 22, -22, 33, -33])
        withExtendedLifetime(subscription) {}
    }

    @Test("withLatestFrom delivers values from several threads one at a time")
    func concurrentSources() {
        let taps = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = taps.withLatestFrom(other) { $0 + $1 }.observe { _ in detector.enter { count.value += 1 } }
        other.send(0)
        DispatchQueue.concurrentPerform(iterations: 3) { lane in
            for value in 0..<5_000 { (lane == 0 ? other : taps).send(value) }
        }
        #expect(count.value == 10_000)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }
}
