import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("observe(on:)", .timeLimit(.minutes(5)))
struct ObserveOnTests {
    @Test("observe(on:) delivers nothing until the scheduler runs, then everything in order")
    func waitsForScheduler() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.observe(on: scheduler))
        subject.send(1)
        subject.send(2)
        subject.complete()
        #expect(recorder.events.isEmpty)
        scheduler.advance()
        #expect(recorder.events == [.next(1), .next(2), .completed])
    }

    @Test("observe(on:) schedules one drain per burst of events, not one per event")
    func oneDrainPerBurst() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.observe(on: scheduler))
        for value in 1...100 { subject.send(value) }
        #expect(scheduler.pendingWorkCount == 1)
        scheduler.advance()
        #expect(recorder.values == Array(1...100))
        subject.send(101)
        #expect(scheduler.pendingWorkCount == 1)
    }

    @Test("observe(on:) keeps events at their virtual times")
    func keepsTimes() {
        expectMarbles("-a-b|", { $0.observe(on: $1) }, "-a-b|")
        expectMarbles("-a#", { $0.observe(on: $1) }, "-a#")
    }

    @Test("observe(on:) on the immediate scheduler changes nothing")
    func immediate() {
        #expect(events(of: { $0.observe(on: .immediate) }, sending: [1, 2, 3]) == [.next(1), .next(2), .next(3), .completed])
    }

    @Test("cancelling drops the events not yet delivered and the scheduled drain")
    func cancelDropsWaiting() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.observe(on: scheduler))
        subject.send(1)
        recorder.cancel()
        #expect(scheduler.pendingWorkCount == 0)
        scheduler.run()
        #expect(recorder.events.isEmpty)
    }

    @Test("cancelling from inside the observer stops the rest of the burst")
    func cancelInsideObserver() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let received = Shared<[Int]>([])
        let holder = Shared<Subscription?>(nil)
        holder.value = subject.observe(on: scheduler).observe { value in
            received.value.append(value)
            if value == 2 { holder.value?.cancel() }
        }
        for value in 1...5 { subject.send(value) }
        scheduler.advance()
        #expect(received.value == [1, 2])
    }

    @Test("observe(on:) a concurrent queue keeps the order of the events, one at a time")
    func concurrentQueueOrder() async {
        let queue = DispatchQueue(label: "observe-on", attributes: .concurrent)
        let subject = PublishSubject<Int>()
        let detector = OverlapDetector()
        let received = Shared<[Int]>([])
        let (done, finished) = AsyncStream<Void>.makeStream()
        let subscription = subject.observe(on: .queue(queue)).subscribe { event in
            detector.enter {
                if case .next(let value) = event { received.value.append(value) }
            }
            if event.isTerminal { finished.yield() }
        }
        for value in 0..<2_000 { subject.send(value) }
        subject.complete()
        var iterator = done.makeAsyncIterator()
        await iterator.next()
        #expect(detector.overlaps == 0)
        #expect(received.value == Array(0..<2_000))
        withExtendedLifetime(subscription) {}
    }

    @Test("observe(on: .main) delivers on the main actor")
    func main() async {
        let subject = PublishSubject<Int>()
        let (done, finished) = AsyncStream<Bool>.makeStream()
        let subscription = subject.observe(on: .main).observe { _ in
            MainActor.assumeIsolated { _ = finished.yield(true) }
        }
        DispatchQueue.global().async { subject.send(1) }
        var iterator = done.makeAsyncIterator()
        #expect(await iterator.next() == true)
        withExtendedLifetime(subscription) {}
    }

    @Test("the observe(on:) machine passes every event on in order, and its end ends the stream")
    func stateMachine() {
        let machine = PassThroughMachine<Int>()
        var step = TimedStep<Int>()
        machine.receive(.next(1), &step)
        machine.receive(.next(2), &step)
        #expect(step.takeEvent()?.value == 1)
        #expect(step.takeEvent()?.value == 2)
        #expect(step.takeEvent() == nil)
        #expect(!step.hasEnded)
        machine.receive(.completed, &step)
        #expect(step.hasEnded)
        #expect(step.takeEvent()?.isTerminal == true)
    }

    @Test("a drain that never catches up keeps only about twice the events waiting")
    func drainBoundsStorage() {
        let machine = PassThroughMachine<Int>()
        var step = TimedStep<Int>()
        machine.receive(.next(0), &step)
        var largest = 0
        for value in 1..<10_000 {
            machine.receive(.next(value), &step)
            #expect(step.takeEvent()?.value == value - 1)
            largest = max(largest, step.outbox.storedCount)
        }
        #expect(largest <= 4)
    }
}
