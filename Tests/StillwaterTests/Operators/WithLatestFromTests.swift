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

    @Test("values the observer sends to the other stream become the latest after the current delivery, in order")
    func reentrantOrder() {
        let taps = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        let received = Shared<[String]>([])
        let subscription = taps.withLatestFrom(other) { ($0, $1) }.observe { tap, latest in
            received.value.append("\(tap):\(latest)")
            if tap == 1 {
                other.send(20)
                // Waits in `taps` until the delivery of 1 is over; by then 20 and 30 have been taken.
                taps.send(2)
                other.send(30)
            }
            received.value.append("end \(tap)")
        }
        other.send(10)
        taps.send(1)
        taps.send(3)
        #expect(received.value == ["1:10", "end 1", "2:30", "end 2", "3:30", "end 3"])
        withExtendedLifetime(subscription) {}
    }

    @Test("a synchronous other stream that sends and completes during subscribe serves every value")
    func synchronousOther() {
        let recorder = Recorder(Observable.of(1, 2).withLatestFrom(Observable.of(10, 20)) { $0 + $1 })
        #expect(recorder.events == [.next(21), .next(22), .completed])
    }

    @Test("the other stream's completion before its first value leaves every value unsent, until this stream ends")
    func otherCompletesEmpty() {
        let taps = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        let recorder = Recorder(taps.withLatestFrom(other))
        other.complete()
        taps.send(1)
        taps.send(2)
        #expect(recorder.events.isEmpty)
        #expect(taps.core.observerCount == 1, "the result goes on")
        taps.complete()
        #expect(recorder.events == [.completed])
    }

    @Test("the other stream's failure before its first value fails the result and cancels this stream")
    func otherFailsFirst() {
        let taps = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        let recorder = Recorder(taps.withLatestFrom(other))
        taps.send(1)
        other.fail(TestError(code: 4))
        taps.send(2)
        other.send(5)
        #expect(recorder.events == [.error(TestError(code: 4))])
        #expect(taps.core.observerCount == 0)
        #expect(other.core.observerCount == 0)
    }

    @Test("this stream's failure cancels the other stream, whose later values send nothing")
    func failureCancelsOther() {
        let taps = PublishSubject<Int>()
        let other = BehaviorSubject(1)
        let recorder = Recorder(taps.withLatestFrom(other))
        taps.fail(TestError(code: 5))
        other.send(2)
        #expect(recorder.events == [.error(TestError(code: 5))])
        #expect(other.core.observerCount == 0)
    }

    @Test("withLatestFrom lets go of its observer when cancelled, while the subscription is still kept")
    func cancelReleasesObserver() {
        let taps = PublishSubject<Int>()
        let other = BehaviorSubject(0)
        var token: Token? = Token()
        weak let weakToken = token
        let received = Shared<[Int]>([])
        let subscription = taps.withLatestFrom(other) { $0 + $1 }.observe { [token] value in
            received.value.append(value + token!.id)
        }
        token = nil
        taps.send(1)
        #expect(weakToken != nil, "the live subscription keeps its observer")
        subscription.cancel()
        #expect(weakToken == nil, "the cancelled subscription lets go of its observer")
        taps.send(2)
        #expect(received.value == [1])
        withExtendedLifetime(subscription) {}
    }

    @Test("two threads sending to the two streams: every value is sent once, in order, with a latest value in order")
    func twoSendingThreads() {
        let taps = PublishSubject<Int>()
        let other = PublishSubject<Int>()
        let detector = OverlapDetector()
        let received = Shared<[(tap: Int, latest: Int)]>([])
        let subscription = taps.withLatestFrom(other) { ($0, $1) }.observe { pair in
            detector.enter { received.value.append(pair) }
        }
        other.send(0)
        let count = 20_000
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            for value in 1...count { (lane == 0 ? other : taps).send(value) }
        }
        #expect(detector.overlaps == 0)
        #expect(received.value.map(\.tap) == Array(1...count))
        let latest = received.value.map(\.latest)
        #expect(zip(latest, latest.dropFirst()).allSatisfy { $0 <= $1 }, "the other stream's values arrive in order")
        #expect(latest.allSatisfy { (0...count).contains($0) })
        withExtendedLifetime(subscription) {}
    }
}
