import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

/// The guarantees every time operator keeps: cancellation cancels scheduled work, nothing leaks, one
/// event at a time, reentrancy without nesting.
@Suite("time operators", .timeLimit(.minutes(5)))
struct TimeOperatorGuaranteeTests {
    @Test("cancelling cancels the scheduled work: nothing is left scheduled and nothing arrives afterwards",
          arguments: TimeOperator.allCases)
    func cancelCancelsScheduledWork(op: TimeOperator) {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let received = Shared<[Event<Int>]>([])
        let subscription = op.apply(to: subject.asObservable(), on: scheduler).subscribe { received.value.append($0) }
        scheduler.advance()                       // subscribe(on:) subscribes now
        subject.send(1)
        subject.send(2)
        if op != .subscribeOn {
            #expect(scheduler.pendingWorkCount > 0, "\(op) should have work scheduled for the values")
        }
        let before = received.value
        subscription.cancel()
        #expect(scheduler.pendingWorkCount == op.workLeftByCancel)
        subject.send(3)
        subject.complete()
        scheduler.run()
        #expect(received.value.count == before.count, "nothing may arrive after cancel(), got \(received.value)")
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("the chain releases everything it captured when it ends, even with work pending",
          arguments: TimeOperator.allCases, Ending.allCases)
    func releasesCaptures(op: TimeOperator, ending: Ending) {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        var subscription: Subscription? = op.apply(to: subject.map { [token] in $0 + token!.id }, on: scheduler)
            .subscribe { [token] _ in _ = token }
        token = nil
        scheduler.advance()
        subject.send(1)
        subject.send(2)
        #expect(weakToken != nil, "the live chain must keep what it captured")
        switch ending {
        case .cancel: subscription?.cancel()
        case .complete: subject.complete()
        case .fail: subject.fail(TestError())
        case .release: subscription = nil
        }
        scheduler.run()                           // delayed completions arrive; scheduled cancels run
        #expect(weakToken == nil, "\(op) must release its captures after \(ending)")
        #expect(scheduler.pendingWorkCount == 0)
        withExtendedLifetime(subscription) {}
    }

    @Test("a subscription released without being cancelled cancels its pending timer at once",
          arguments: [TimeOperator.debounce, .throttle, .delay, .timeout])
    func releaseCancelsTimer(op: TimeOperator) {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var subscription: Subscription? = op.apply(to: subject.asObservable(), on: scheduler).observe { _ in }
        subject.send(1)
        subject.send(2)
        #expect(scheduler.pendingWorkCount > 0)
        subscription = nil
        #expect(scheduler.pendingWorkCount == 0)
        withExtendedLifetime(subscription) {}
    }

    @Test("the observer receives one event at a time when values and timers race on a concurrent queue",
          arguments: TimeOperator.allCases)
    func oneEventAtATime(op: TimeOperator) async {
        let queue = DispatchQueue(label: "racing", attributes: .concurrent)
        let subject = PublishSubject<Int>()
        let detector = OverlapDetector()
        let (done, finished) = AsyncStream<Void>.makeStream()
        let subscription = op.apply(to: subject.asObservable(), on: DispatchQueueScheduler(queue))
            .subscribe { event in
                detector.enter { for _ in 0..<200 { _ = Int.random(in: 0...1) } }
                if event.isTerminal { finished.yield() }
            }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for value in 0..<300 { subject.send(thread * 1_000 + value) }
        }
        subject.complete()
        var iterator = done.makeAsyncIterator()
        await iterator.next()
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }

    @Test("an event sent upstream from inside the observer is delivered after the current one, never nested",
          arguments: TimeOperator.allCases)
    func reentrancy(op: TimeOperator) {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let depth = Shared(0)
        let maxDepth = Shared(0)
        let received = Shared<[Int]>([])
        let subscription = op.apply(to: subject.asObservable(), on: scheduler).observe { value in
            depth.value += 1
            maxDepth.value = max(maxDepth.value, depth.value)
            received.value.append(value)
            if value < 5 { subject.send(value + 1) }
            depth.value -= 1
        }
        scheduler.advance()
        subject.send(1)
        scheduler.advance(by: .seconds(30))
        #expect(maxDepth.value == 1)
        #expect(received.value == [1, 2, 3, 4, 5])
        withExtendedLifetime(subscription) {}
    }

    @Test("a negative time stops the program with a message naming the operator", arguments: [
        "debounce", "throttle", "delay", "timeout",
    ])
    func negativeTime(name: String) async {
        switch name {
        case "debounce":
            await #expect(processExitsWith: .failure) {
                _ = Observable<Int>.never().debounce(for: .seconds(-1), scheduler: .immediate)
            }
        case "throttle":
            await #expect(processExitsWith: .failure) {
                _ = Observable<Int>.never().throttle(for: .seconds(-1), scheduler: .immediate)
            }
        case "delay":
            await #expect(processExitsWith: .failure) {
                _ = Observable<Int>.never().delay(for: .seconds(-1), scheduler: .immediate)
            }
        default:
            await #expect(processExitsWith: .failure) {
                _ = Observable<Int>.never().timeout(.seconds(-1), scheduler: .immediate)
            }
        }
    }
}
