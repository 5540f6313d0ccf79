import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("first() and firstValue(where:)", .timeLimit(.minutes(5)))
struct FirstValueTests {
    @Test("first() returns a value that is there at once, and cancels the subscription")
    func immediateValue() async throws {
        let subject = BehaviorSubject(7)
        #expect(try await subject.first() == 7)
        #expect(subject.core.observerCount == 0)
    }

    @Test("first() waits for a value sent later")
    func laterValue() async throws {
        let subject = PublishSubject<String>()
        let (subscribed, continuation) = AsyncStream<Void>.makeStream()
        let source = Observable<String> { observer in
            defer { continuation.yield() }
            return subject.subscribe(observer)
        }
        let waiter = Task { try await source.first() }
        var iterator = subscribed.makeAsyncIterator()
        await iterator.next()
        subject.send("hello")
        subject.send("ignored")
        #expect(try await waiter.value == "hello")
    }

    @Test("first() returns nil when the stream completes without a value")
    func emptyStream() async throws {
        #expect(try await Observable<Int>.empty().first() == nil)
    }

    @Test("first() throws the stream's error")
    func failure() async {
        await #expect(throws: TestError(code: 2)) {
            try await Observable<Int>.failure(TestError(code: 2)).first()
        }
    }

    @Test("firstValue(where:) skips values until one matches")
    func predicate() async throws {
        #expect(try await Observable.from(1...10).firstValue(where: { $0 > 3 && $0.isMultiple(of: 2) }) == 4)
        #expect(try await Observable.from(1...3).firstValue(where: { $0 > 5 }) == nil)
    }

    @Test("cancelling the waiting task throws CancellationError and cancels the subscription")
    func cancellation() async throws {
        let subject = PublishSubject<Int>()
        let (events, continuation) = AsyncStream<String>.makeStream()
        let source = Observable<Int> { observer in
            let inner = subject.subscribe(observer)
            continuation.yield("subscribed")
            return Subscription {
                inner.cancel()
                continuation.yield("cancelled")
            }
        }
        let waiter = Task { try await source.first() }
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == "subscribed")
        waiter.cancel()
        #expect(await iterator.next() == "cancelled")
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test("a task cancelled before it waits throws CancellationError without subscribing")
    func cancelledBefore() async {
        let subscribed = AtomicCounter()
        let source = Observable<Int> { _ in
            subscribed.increment()
            return .empty
        }
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await source.first()
        }
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(subscribed.value == 0)
    }
}
