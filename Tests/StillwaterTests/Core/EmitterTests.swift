import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Emitter")
struct EmitterTests {
    /// A stream that hands its emitter to the test.
    private func captured() -> (Observable<Int>, Shared<Emitter<Int>?>) {
        let holder = Shared<Emitter<Int>?>(nil)
        let source = Observable<Int>.create { emitter in
            holder.value = emitter
            return .empty
        }
        return (source, holder)
    }

    @Test("sends are ignored after complete")
    func ignoresAfterComplete() {
        let (source, emitter) = captured()
        let recorder = Recorder(source)
        emitter.value?.send(1)
        emitter.value?.complete()
        emitter.value?.send(2)
        emitter.value?.complete()
        emitter.value?.fail(TestError())
        #expect(recorder.events == [.next(1), .completed])
        #expect(emitter.value?.isActive == false)
    }

    @Test("sends are ignored after fail")
    func ignoresAfterFail() {
        let (source, emitter) = captured()
        let recorder = Recorder(source)
        emitter.value?.fail(TestError(code: 2))
        emitter.value?.send(2)
        emitter.value?.complete()
        #expect(recorder.events == [.error(TestError(code: 2))])
    }

    @Test("sends are ignored after the subscription is cancelled")
    func ignoresAfterCancel() {
        let (source, emitter) = captured()
        let recorder = Recorder(source)
        emitter.value?.send(1)
        #expect(emitter.value?.isActive == true)
        recorder.cancel()
        #expect(emitter.value?.isActive == false)
        emitter.value?.send(2)
        emitter.value?.complete()
        #expect(recorder.events == [.next(1)])
    }

    @Test("a send from inside the observer is delivered after the current event, not nested")
    func reentrantSendIsQueued() {
        let (source, emitter) = captured()
        let log = Shared<[String]>([])
        let subscription = source.observe { value in
            log.value.append("enter \(value)")
            if value == 1 { emitter.value?.send(2) }
            log.value.append("exit \(value)")
        }
        emitter.value?.send(1)
        #expect(log.value == ["enter 1", "exit 1", "enter 2", "exit 2"])
        withExtendedLifetime(subscription) {}
    }

    @Test("an observer that cancels itself receives nothing after, even a send it queued before cancelling")
    func selfCancelDropsQueuedSend() {
        let (source, emitter) = captured()
        let seen = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = source.observe { value in
            seen.value.append(value)
            if value == 1 {
                emitter.value?.send(2)
                subscription.value?.cancel()
            }
        }
        emitter.value?.send(1)
        emitter.value?.send(3)
        #expect(seen.value == [1])
    }

    @Test("events sent from many threads reach the observer one at a time, every one of them")
    func concurrentSends() {
        let (source, emitter) = captured()
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = source.observe { _ in detector.enter { count.value += 1 } }
        let target = emitter.value!
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for value in 0..<5_000 { target.send(value) }
        }
        #expect(count.value == 20_000)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }
}
