import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// Where each time operator delivers: what its timers release (a debounced or throttled value, a delayed
/// event, a timeout, a value moved by `observe(on:)`, an array whose timeSpan ended) comes from the
/// scheduler, never from a thread that happened to be sending when the timer fired. Values an operator
/// passes on at once (throttle's first value of an interval, timeout's values, a buffer's full array)
/// come from the scheduler too: handed to it during the sender's `send`, never sent on the sender's
/// thread.
@Suite("time operators: the delivering thread", .timeLimit(.minutes(5)))
struct TimeOperatorThreadTests {
    /// What one delivery saw: the value, whether it ran on the scheduler's queue, and the value the
    /// sender was sending at that moment (-1 when it was not inside `send`).
    struct Delivery: Sendable {
        let value: Int
        let onQueue: Bool
        let sending: Int
    }

    enum Checked: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case debounce, throttle, delay, timeout, observeOn, buffer
        var testDescription: String { rawValue }

        func apply(to source: Observable<Int>, on scheduler: DispatchQueueScheduler) -> Observable<Int> {
            switch self {
            case .debounce: source.debounce(for: .zero, scheduler: scheduler)
            case .throttle: source.throttle(for: .microseconds(200), scheduler: scheduler)
            case .delay: source.delay(for: .zero, scheduler: scheduler)
            case .timeout: source.timeout(.seconds(30), scheduler: scheduler)
            case .observeOn: source.observe(on: scheduler)
            // An array is seen as its last value (-1 when empty): a full one goes out during the send of
            // its last value, one a timeSpan ends comes from the queue.
            case .buffer:
                source.buffer(timeSpan: .microseconds(100), count: 50, scheduler: scheduler).map { $0.last ?? -1 }
            }
        }

        /// Whether the operator may pass a value on at once, on the sender's thread, inside its `send`:
        /// none does (each hands such a value to its scheduler).
        var passesValuesAtOnce: Bool { false }
    }

    /// Sends `values` values from one thread at full speed into `op` on a queue scheduler (serial or
    /// concurrent) while the queue fires the operator's timers, and returns every delivery once the last
    /// values had time to arrive.
    static func drive(_ op: Checked, values count: Int, concurrent: Bool) async -> [Delivery] {
        let key = DispatchSpecificKey<Bool>()
        let queue = concurrent
            ? DispatchQueue(label: "time-operator-concurrent", attributes: .concurrent)
            : DispatchQueue(label: "time-operator-scheduler")
        queue.setSpecific(key: key, value: true)
        let subject = PublishSubject<Int>()
        let sending = Atomic<Int>(-1)
        let deliveries = Mutex<[Delivery]>([])
        let subscription = op.apply(to: subject.asObservable(), on: DispatchQueueScheduler(queue)).observe { value in
            let delivery = Delivery(
                value: value, onQueue: DispatchQueue.getSpecific(key: key) == true,
                sending: sending.load(ordering: .relaxed))
            deliveries.withLock { $0.append(delivery) }
        }
        let (finished, finish) = AsyncStream<Void>.makeStream()
        Thread.detachNewThread {
            for value in 0..<count {
                sending.store(value, ordering: .relaxed)
                subject.send(value)
                sending.store(-1, ordering: .relaxed)
            }
            finish.yield()
        }
        var waiting = finished.makeAsyncIterator()
        await waiting.next()
        // Let the last timers fire: every value for delay and observe(on:), the last one for debounce and
        // throttle, a short while for the others.
        _ = await eventually(within: 10) {
            let values = deliveries.withLock { $0.map(\.value) }
            switch op {
            case .delay, .observeOn: return values.count == count
            case .debounce, .throttle: return values.last == count - 1
            case .timeout, .buffer: return true
            }
        }
        try? await Task.sleep(for: .milliseconds(20))
        queue.sync(flags: .barrier) {}
        return withExtendedLifetime(subscription) { deliveries.withLock { $0 } }
    }

    @Test("what a time operator's timers release is sent from its scheduler, even while a sender keeps the operator busy",
          arguments: Checked.allCases)
    func timerValuesComeFromTheScheduler(op: Checked) async {
        let all = await Self.drive(op, values: 20_000, concurrent: false)
        #expect(!all.isEmpty)
        let fromTheQueue = all.filter(\.onQueue).count
        let wrong = all.filter { delivery in
            guard !delivery.onQueue else { return false }
            // Off the queue is right only for a value passed on at once, during its own send.
            return !(op.passesValuesAtOnce && delivery.value == delivery.sending)
        }
        #expect(wrong.isEmpty, "\(op): \(wrong.count) of \(all.count) values released by a timer arrived off the scheduler (\(fromTheQueue) on it); first: \(wrong.prefix(3).map { ($0.value, $0.sending) })")
        if !op.passesValuesAtOnce {
            #expect(fromTheQueue == all.count)
        }
        // Nothing a timer releases is lost while the sender keeps the operator busy.
        let values = all.map(\.value)
        switch op {
        case .delay, .observeOn:
            #expect(values == Array(0..<20_000), "\(op) lost or reordered values: \(values.count) of 20000")
        case .debounce, .throttle:
            #expect(values.last == 19_999, "\(op) never sent the last value; last: \(String(describing: values.last))")
        case .timeout, .buffer:
            break
        }
    }

    @Test("on a concurrent queue, delayed and debounced values are neither lost nor sent off the queue",
          arguments: [Checked.delay, .debounce, .throttle])
    func concurrentScheduler(op: Checked) async {
        let all = await Self.drive(op, values: 5_000, concurrent: true)
        let settled = op == .delay ? all.count == 5_000 : all.last?.value == 4_999
        #expect(settled, "\(op): \(all.count) values, last \(String(describing: all.last?.value))")
        let wrong = all.filter { !$0.onQueue && !(op.passesValuesAtOnce && $0.value == $0.sending) }
        #expect(wrong.isEmpty, "\(op): \(wrong.count) values released by a timer arrived off the queue")
    }

    @Test("a firing made while its own thread runs the operator (an observer that sends, on a scheduler that runs work at once) is queued, not nested or retried forever")
    func firingOnTheRunningThread() {
        // Every delivery is scheduler work now, so an observer can no longer drive a TestScheduler's
        // clock; on the immediate scheduler, each timer fires on the thread that is delivering.
        let subject = PublishSubject<Int>()
        let received = Shared<[Int]>([])
        let depth = Shared(0)
        let deepest = Shared(0)
        let subscription = subject.throttle(for: .seconds(1), scheduler: .immediate).observe { value in
            depth.value += 1
            deepest.value = max(deepest.value, depth.value)
            received.value.append(value)
            if value < 3 { subject.send(value + 1) }
            depth.value -= 1
        }
        subject.send(1)
        #expect(received.value == [1, 2, 3])
        #expect(deepest.value == 1)
        withExtendedLifetime(subscription) {}
    }

    @Test("a timeout's error is sent from the scheduler")
    func timeoutErrorFromTheScheduler() async {
        let key = DispatchSpecificKey<Bool>()
        let queue = DispatchQueue(label: "timeout-scheduler")
        queue.setSpecific(key: key, value: true)
        let subject = PublishSubject<Int>()
        let (ended, endedContinuation) = AsyncStream<Bool>.makeStream()
        let subscription = subject.timeout(.milliseconds(20), scheduler: DispatchQueueScheduler(queue))
            .subscribe(onError: { _ in endedContinuation.yield(DispatchQueue.getSpecific(key: key) == true) })
        subject.send(1)
        var iterator = ended.makeAsyncIterator()
        let onQueue = await iterator.next()
        #expect(onQueue == true)
        withExtendedLifetime(subscription) {}
    }
}
