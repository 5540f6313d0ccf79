import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// Every event a time operator sends, its values (the first of a throttle interval, timeout's, a full
/// buffer) and its completion or failure, comes from the scheduler it was given, while one background
/// thread sends into it. One test per operator; each checks every delivery.
@Suite("time operators: every event from the scheduler", .timeLimit(.minutes(5)))
struct TimeOperatorDeliveryTests {
    /// How the background sender ends its stream.
    enum End: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case complete, fail
        var testDescription: String { rawValue }
    }

    /// One delivery: the event as text, whether it ran on the scheduler's queue, and when it ran.
    struct Delivery: Sendable {
        let event: String
        let onQueue: Bool
        let at: ContinuousClock.Instant
    }

    /// A serial queue scheduler that can tell whether the calling thread is running its queue.
    struct MarkedQueue: Sendable {
        let queue = DispatchQueue(label: "time-operator-delivery")
        let key = DispatchSpecificKey<Bool>()
        init() { queue.setSpecific(key: key, value: true) }
        var scheduler: DispatchQueueScheduler { DispatchQueueScheduler(queue) }
        var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
    }

    /// Subscribes `pipeline` on a marked queue, sends `count` values from a background thread and then
    /// ends the stream as `end` says, and returns every delivery up to the terminal one.
    static func deliveries<Output>(
        count: Int = 2_000, ending end: End,
        _ pipeline: (Observable<Int>, DispatchQueueScheduler) -> Observable<Output>
    ) async -> [Delivery] {
        let marked = MarkedQueue()
        let subject = PublishSubject<Int>()
        let recorded = Mutex<[Delivery]>([])
        let (ended, endedContinuation) = AsyncStream<Void>.makeStream()
        let subscription = pipeline(subject.asObservable(), marked.scheduler).subscribe { event in
            let delivery = Delivery(event: "\(event)", onQueue: marked.isCurrent, at: .now)
            recorded.withLock { $0.append(delivery) }
            if event.isTerminal { endedContinuation.yield() }
        }
        Thread.detachNewThread {
            for value in 0..<count { subject.send(value) }
            switch end {
            case .complete: subject.complete()
            case .fail: subject.fail(TestError())
            }
        }
        var iterator = ended.makeAsyncIterator()
        await iterator.next()
        return withExtendedLifetime(subscription) { recorded.withLock { $0 } }
    }

    /// Checks that `all` ended as `end` says and that every delivery ran on the queue.
    static func expectAllOnQueue(_ all: [Delivery], ending end: End, _ name: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        let off = all.filter { !$0.onQueue }
        #expect(off.isEmpty, "\(name): \(off.count) of \(all.count) deliveries off the scheduler; first: \(off.prefix(3).map(\.event))",
                sourceLocation: sourceLocation)
        let last = all.last?.event ?? "nothing"
        #expect(end == .complete ? last == "completed" : last.hasPrefix("error"),
                "\(name) ended with \(last)", sourceLocation: sourceLocation)
    }

    @Test("throttle sends every value, the first of each interval too, and its end from the scheduler",
          arguments: End.allCases)
    func throttle(end: End) async {
        let all = await Self.deliveries(ending: end) { $0.throttle(for: .microseconds(200), scheduler: $1) }
        Self.expectAllOnQueue(all, ending: end, "throttle")
        #expect(all.count >= 2)
    }

    @Test("the first value of a throttle interval goes out on the scheduler's next turn, not after the interval")
    func throttleFirstValueIsNotDelayed() {
        // Virtual time, so the check does not depend on how busy the machine is: the value is due at once,
        // and a value held for the interval would show up only after a minute of the scheduler's time.
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let received = Lock<[Int]>([])
        let subscription = subject.throttle(for: .seconds(60), scheduler: scheduler).observe { value in
            received.withLock { $0.append(value) }
        }
        subject.send(1)
        #expect(received.withLock { $0 }.isEmpty, "sent from the scheduler, never from the sender's call")
        scheduler.advance(by: .zero)
        #expect(received.withLock { $0 } == [1])
        withExtendedLifetime(subscription) {}
    }

    @Test("debounce sends its values and its end from the scheduler", arguments: End.allCases)
    func debounce(end: End) async {
        let all = await Self.deliveries(ending: end) { $0.debounce(for: .zero, scheduler: $1) }
        Self.expectAllOnQueue(all, ending: end, "debounce")
    }

    @Test("delay sends every value and its end from the scheduler, the error too", arguments: End.allCases)
    func delay(end: End) async {
        let all = await Self.deliveries(ending: end) { $0.delay(for: .microseconds(50), scheduler: $1) }
        Self.expectAllOnQueue(all, ending: end, "delay")
        if end == .complete {
            #expect(all.dropLast().map(\.event) == (0..<2_000).map { "next(\($0))" })
        }
    }

    @Test("timeout passes every value and its end on from the scheduler", arguments: End.allCases)
    func timeout(end: End) async {
        let all = await Self.deliveries(ending: end) { $0.timeout(.seconds(30), scheduler: $1) }
        Self.expectAllOnQueue(all, ending: end, "timeout")
        #expect(all.dropLast().map(\.event) == (0..<2_000).map { "next(\($0))" })
    }

    @Test("buffer(timeSpan:count:scheduler:) sends full arrays and its end from the scheduler",
          arguments: End.allCases)
    func buffer(end: End) async {
        // A span no run reaches, so every array before the end is full, however slow the machine (with a
        // span of 100 µs, a run under the thread sanitizer once sent none full). The timed arrays' thread
        // is checked by TimeOperatorThreadTests.
        let all = await Self.deliveries(ending: end) {
            $0.buffer(timeSpan: .seconds(60), count: 7, scheduler: $1).map { $0.count }
        }
        Self.expectAllOnQueue(all, ending: end, "buffer")
        // Full arrays of 7 went out as soon as they were full, yet from the scheduler.
        #expect(all.filter { $0.event == "next(7)" }.count == 2_000 / 7)
    }

    @Test("retry(_:delay:scheduler:) sends each attempt's values, and its end, from the scheduler",
          arguments: End.allCases)
    func retry(end: End) async {
        let marked = MarkedQueue()
        let attempts = Atomic<Int>(0)
        // Each attempt sends from its own background thread; the first two fail, the third ends as `end`.
        let source = Observable<Int> { observer in
            let attempt = attempts.add(1, ordering: .relaxed).newValue
            let subject = PublishSubject<Int>()
            let subscription = subject.subscribe(observer)
            Thread.detachNewThread {
                for value in 0..<500 { subject.send(attempt * 1_000 + value) }
                if attempt < 3 || end == .fail { subject.fail(TestError(code: attempt)) } else { subject.complete() }
            }
            return subscription
        }
        let recorded = Mutex<[Delivery]>([])
        let (ended, endedContinuation) = AsyncStream<Void>.makeStream()
        let subscription = source.retry(end == .fail ? 2 : 5, delay: .milliseconds(1), scheduler: marked.scheduler)
            .subscribe { event in
                let delivery = Delivery(event: "\(event)", onQueue: marked.isCurrent, at: .now)
                recorded.withLock { $0.append(delivery) }
                if event.isTerminal { endedContinuation.yield() }
            }
        var iterator = ended.makeAsyncIterator()
        await iterator.next()
        let all = recorded.withLock { $0 }
        Self.expectAllOnQueue(all, ending: end, "retry")
        #expect(all.count == 3 * 500 + 1)
        #expect(attempts.load(ordering: .relaxed) == 3)
        withExtendedLifetime(subscription) {}
    }
}
