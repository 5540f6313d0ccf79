import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("sample")
struct SampleTests {
    @Test("each tick sends the latest value if a new one arrived since the last tick")
    func samples() {
        let source = PublishSubject<Int>()
        let ticks = PublishSubject<Void>()
        let recorder = Recorder(source.sample(ticks))
        ticks.send(())
        source.send(1)
        source.send(2)
        ticks.send(())
        ticks.send(())
        source.send(3)
        ticks.send(())
        #expect(recorder.values == [2, 3])
    }

    @Test("an empty source completes at the next tick")
    func empty() {
        let ticks = PublishSubject<Int>()
        let recorder = Recorder(Observable<Int>.empty().sample(ticks))
        #expect(recorder.events.isEmpty)
        ticks.send(0)
        #expect(recorder.events == [.completed])
        #expect(ticks.core.observerCount == 0)
    }

    @Test("the source's completion completes at the next tick, after the value waiting")
    func completion() {
        let source = PublishSubject<Int>()
        let ticks = PublishSubject<Void>()
        let recorder = Recorder(source.sample(ticks))
        source.send(1)
        source.complete()
        #expect(recorder.events.isEmpty)
        ticks.send(())
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test("the sampler's completion is a last tick; the source's completion then completes at once")
    func samplerCompletes() {
        let source = PublishSubject<Int>()
        let ticks = PublishSubject<Void>()
        let recorder = Recorder(source.sample(ticks))
        source.send(1)
        ticks.complete()
        source.send(2)
        #expect(recorder.events == [.next(1)])
        source.complete()
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test("the sampler's completion after the source's completes the result")
    func bothComplete() {
        let source = PublishSubject<Int>()
        let ticks = PublishSubject<Void>()
        let recorder = Recorder(source.sample(ticks))
        source.send(4)
        source.complete()
        ticks.complete()
        #expect(recorder.events == [.next(4), .completed])
    }

    @Test("the source's failure fails the result at once, dropping the value waiting")
    func error() {
        let ticks = BehaviorSubject(0)
        expectForwardsError({ source in source.sample(ticks) }, sending: [1, 2], expecting: [])
        let source = PublishSubject<Int>()
        let recorder = Recorder(source.sample(ticks))
        source.send(1)
        ticks.send(1)
        source.send(2)
        source.fail(TestError(code: 2))
        #expect(recorder.events == [.next(1), .error(TestError(code: 2))])
        #expect(ticks.core.observerCount == 0)
    }

    @Test("the sampler's failure fails the result and cancels the source")
    func samplerFails() {
        let source = PublishSubject<Int>()
        let ticks = PublishSubject<Void>()
        let recorder = Recorder(source.sample(ticks))
        source.send(1)
        ticks.fail(TestError(code: 5))
        #expect(recorder.events == [.error(TestError(code: 5))])
        #expect(source.core.observerCount == 0)
    }

    @Test("sample stops when cancelled mid-stream")
    func cancel() {
        let ticks = PublishSubject<Void>()
        let source = PublishSubject<Int>()
        let recorder = Recorder(source.sample(ticks))
        source.send(1)
        ticks.send(())
        recorder.cancel()
        source.send(2)
        ticks.send(())
        ticks.complete()
        #expect(recorder.events == [.next(1)])
        #expect(source.core.observerCount == 0)
        #expect(ticks.core.observerCount == 0)
    }

    @Test("sample releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.map { [token] in $0 + token.id }.sample(source)
        }
    }

    @Test("a tick or a value sent from inside the observer is delivered after the current one")
    func reentrant() {
        let source = PublishSubject<Int>()
        let ticks = PublishSubject<Void>()
        let received = Shared<[Int]>([])
        let subscription = source.sample(ticks).observe { value in
            received.value.append(value)
            if value < 3 {
                source.send(value + 1)
                ticks.send(())
            }
            received.value.append(-value)
        }
        source.send(1)
        ticks.send(())
        #expect(received.value == [1, -1, 2, -2, 3, -3])
        withExtendedLifetime(subscription) {}
    }

    @Test("sample delivers from several threads one at a time, never a value twice")
    func concurrentSources() {
        let source = PublishSubject<Int>()
        let ticks = PublishSubject<Void>()
        let detector = OverlapDetector()
        let seen = Shared<[Int]>([])
        let subscription = source.sample(ticks).observe { value in detector.enter { seen.value.append(value) } }
        DispatchQueue.concurrentPerform(iterations: 3) { lane in
            for value in 0..<5_000 {
                if lane == 0 { source.send(value) } else { ticks.send(()) }
            }
        }
        ticks.send(())
        #expect(detector.overlaps == 0)
        #expect(seen.value.last == 4_999)
        #expect(seen.value == seen.value.sorted() && Set(seen.value).count == seen.value.count)
        withExtendedLifetime(subscription) {}
    }
}
