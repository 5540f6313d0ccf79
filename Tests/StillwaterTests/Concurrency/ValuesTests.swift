import Testing
@testable import Stillwater

@Suite("values", .timeLimit(.minutes(5)))
struct ValuesTests {
    /// A stream over `subject` that reports each subscription and cancellation.
    private func signalling(_ subject: PublishSubject<Int>)
        -> (Observable<Int>, AsyncStream<Void>, AsyncStream<Void>)
    {
        let (subscribed, subscribedContinuation) = AsyncStream<Void>.makeStream()
        let (cancelled, cancelledContinuation) = AsyncStream<Void>.makeStream()
        let source = Observable<Int> { observer in
            let inner = subject.subscribe(observer)
            subscribedContinuation.yield()
            return Subscription {
                inner.cancel()
                cancelledContinuation.yield()
            }
        }
        return (source, subscribed, cancelled)
    }

    @Test("for try await ends when the stream completes")
    func endsOnCompletion() async throws {
        var collected: [Int] = []
        for try await value in Observable.of(1, 2, 3).values { collected.append(value) }
        #expect(collected == [1, 2, 3])
    }

    @Test("for try await receives values sent after it started, then ends on completion")
    func liveValues() async throws {
        let subject = PublishSubject<Int>()
        let (source, subscribed, _) = signalling(subject)
        let task = Task {
            var collected: [Int] = []
            for try await value in source.values { collected.append(value) }
            return collected
        }
        var started = subscribed.makeAsyncIterator()
        _ = await started.next()
        for value in 1...100 { subject.send(value) }
        subject.complete()
        #expect(try await task.value == Array(1...100))
    }

    @Test("for try await throws the stream's error after its values")
    func throwsOnFailure() async {
        let source = Observable<Int>.create { emitter in
            emitter.send(1)
            emitter.send(2)
            emitter.fail(TestError(code: 4))
            return .empty
        }
        var collected: [Int] = []
        await #expect(throws: TestError(code: 4)) {
            for try await value in source.values { collected.append(value) }
        }
        #expect(collected == [1, 2])
    }

    @Test("cancelling the task cancels the subscription and ends the loop without an error")
    func taskCancellation() async throws {
        let subject = PublishSubject<Int>()
        let (source, subscribed, cancelled) = signalling(subject)
        let task = Task {
            var collected: [Int] = []
            for try await value in source.values { collected.append(value) }
            return collected
        }
        var started = subscribed.makeAsyncIterator()
        _ = await started.next()
        task.cancel()
        var ended = cancelled.makeAsyncIterator()
        _ = await ended.next()
        let collected = try await task.value
        #expect(collected.isEmpty)
    }

    @Test("leaving the loop early cancels the subscription")
    func breakCancels() async throws {
        let subject = BehaviorSubject(0)
        let (cancelled, cancelledContinuation) = AsyncStream<Void>.makeStream()
        let source = Observable<Int> { observer in
            let inner = subject.subscribe(observer)
            return Subscription {
                inner.cancel()
                cancelledContinuation.yield()
            }
        }
        for try await value in source.values {
            #expect(value == 0)
            break
        }
        var ended = cancelled.makeAsyncIterator()
        _ = await ended.next()
    }

    @Test("a PublishRelay's values never throw and arrive in order once the loop has started")
    func publishRelayValues() async {
        let relay = PublishRelay<Int>()
        let consumer = Task {
            var collected: [Int] = []
            for await value in relay.values {     // no `try`: the relay's sequence cannot throw
                collected.append(value)
                if collected.count == 3 { break }
            }
            return collected
        }
        // A relay cannot say when the loop subscribed, and values accepted before that are not seen, so
        // keep accepting until the loop has taken three.
        let feeder = Task {
            var value = 0
            while !Task.isCancelled {
                value += 1
                relay.accept(value)
                await Task.yield()
            }
        }
        let collected = await consumer.value
        feeder.cancel()
        #expect(collected.count == 3)
        if let first = collected.first { #expect(collected == [first, first + 1, first + 2]) }
    }

    @Test("a BehaviorRelay's values start with the current value and never throw")
    func behaviorRelayValues() async {
        let relay = BehaviorRelay(7)
        var collected: [Int] = []
        for await value in relay.values {
            collected.append(value)
            if value == 7 { relay.accept(8) }
            if value == 8 { break }
        }
        #expect(collected == [7, 8])
    }

    @Test("buffering newest keeps the latest values when the consumer lags", arguments: [1, 2, 5])
    func bufferingNewest(limit: Int) async throws {
        var collected: [Int] = []
        for try await value in Observable.from(1...10).values(buffering: .newest(limit)) { collected.append(value) }
        #expect(collected == Array((1...10).suffix(limit)))
    }

    @Test("buffering newest bounds the memory a lagging consumer costs", arguments: [1, 3])
    func bufferingNewestBoundsStorage(limit: Int) {
        let subject = PublishSubject<Int>()
        let channel = ValuesChannel(source: subject.asObservable(), buffering: .newest(limit))
        channel.startIfNeeded()
        for value in 0..<10_000 { subject.send(value) }
        #expect(channel.storedCount <= 2 * limit + 1)
    }

    @Test("buffering oldest keeps the first values and drops the rest while full", arguments: [1, 2, 5])
    func bufferingOldest(limit: Int) async throws {
        var collected: [Int] = []
        for try await value in Observable.from(1...10).values(buffering: .oldest(limit)) { collected.append(value) }
        #expect(collected == Array((1...10).prefix(limit)))
    }

    @Test("unbounded buffering keeps every value")
    func bufferingUnbounded() async throws {
        var collected: [Int] = []
        for try await value in Observable.from(1...1_000).values(buffering: .unbounded) { collected.append(value) }
        #expect(collected == Array(1...1_000))
    }

    @Test("each iterator subscribes on its own")
    func iteratorsIndependent() async throws {
        let sequence = Observable.of(1, 2).values
        var first: [Int] = []
        for try await value in sequence { first.append(value) }
        var second: [Int] = []
        for try await value in sequence { second.append(value) }
        #expect(first == [1, 2] && second == [1, 2])
    }

    @Test(
        "values sent from another thread wake the loop, in order, and the loop gets the last one",
        arguments: [ValuesBuffering.unbounded, .newest(1), .newest(3), .oldest(10_000)]
    )
    func valuesFromAnotherThread(buffering: ValuesBuffering) async throws {
        let subject = PublishSubject<Int>()
        let (source, subscribed, _) = signalling(subject)
        let last = 9_999
        let loop = Task {
            var collected: [Int] = []
            for try await value in source.values(buffering: buffering) {
                collected.append(value)
                if value == last { break }
            }
            return collected
        }
        var started = subscribed.makeAsyncIterator()
        _ = await started.next()
        let sender = Task.detached {
            for value in 0...last { subject.send(value) }
        }
        let collected = try await loop.value
        await sender.value
        #expect(collected.last == last)
        #expect(zip(collected, collected.dropFirst()).allSatisfy { $0 < $1 })
        if buffering == .unbounded || buffering == .oldest(10_000) { #expect(collected == Array(0...last)) }
    }

    @Test("a task cancelled with values buffered gets them, then the loop ends; later values are dropped")
    func cancelledWithBufferedValues() async throws {
        let subject = BehaviorSubject(0)
        let loop = Task {
            var collected: [Int] = []
            for try await value in subject.values {
                collected.append(value)
                if value == 0 {
                    for next in 1...3 { subject.send(next) }
                    withUnsafeCurrentTask { $0?.cancel() }
                }
                if value == 1 { subject.send(4) }
            }
            return collected
        }
        #expect(try await loop.value == [0, 1, 2, 3])
        #expect(subject.core.observerCount == 0)
    }

    @Test("a failure that wakes a waiting loop is thrown once, after the values before it")
    func failureWakesWaitingLoop() async throws {
        let subject = PublishSubject<Int>()
        let (source, subscribed, _) = signalling(subject)
        let loop = Task { () -> ([Int], TestError?) in
            var collected: [Int] = []
            do {
                for try await value in source.values(buffering: .newest(1)) { collected.append(value) }
            } catch let error as TestError {
                return (collected, error)
            }
            return (collected, nil)
        }
        var started = subscribed.makeAsyncIterator()
        _ = await started.next()
        subject.send(1)
        subject.fail(TestError(code: 9))
        let (collected, error) = try await loop.value
        #expect(collected == [1])
        #expect(error == TestError(code: 9))
    }

    @Test("leaving the loop releases the channel and detaches its observer")
    func leavingReleasesChannel() async throws {
        let subject = BehaviorSubject(0)
        weak var channel: ValuesChannel<Int>?
        do {
            var iterator = subject.values(buffering: .newest(1)).makeAsyncIterator()
            channel = iterator.channel
            #expect(try await iterator.next() == 0)
            #expect(subject.core.observerCount == 1)
        }
        #expect(channel == nil)
        #expect(subject.core.observerCount == 0)
    }
}
