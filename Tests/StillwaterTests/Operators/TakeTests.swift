import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("take")
struct TakeTests {
    @Test("take sends the first count values, then completes", arguments: [1, 2, 5])
    func takesFirst(count: Int) {
        let recorded = events(of: { $0.take(count) }, sending: Array(1...10), then: nil)
        #expect(recorded == (1...count).map(Event.next) + [.completed])
    }

    @Test("take(0) completes at once without subscribing to the source")
    func takeZero() {
        let subscribed = Shared(false)
        let source = Observable<Int> { _ in
            subscribed.value = true
            return .empty
        }
        let recorder = Recorder(source.take(0))
        #expect(recorder.events == [.completed])
        #expect(!subscribed.value)
    }

    @Test("take cancels its subscription to the source once it has its count")
    func cancelsUpstream() {
        let cancelled = Shared(false)
        let subject = PublishSubject<Int>()
        let source = Observable<Int> { observer in
            let inner = subject.subscribe(observer)
            return Subscription {
                cancelled.value = true
                inner.cancel()
            }
        }
        let recorder = Recorder(source.take(2))
        subject.send(1)
        #expect(!cancelled.value)
        subject.send(2)
        #expect(cancelled.value)
        subject.send(3)
        #expect(recorder.events == [.next(1), .next(2), .completed])
    }

    @Test("take completes early when the source completes first")
    func sourceCompletesFirst() {
        #expect(events(of: { $0.take(5) }, sending: [1, 2]) == [.next(1), .next(2), .completed])
    }

    @Test("take completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.take(3) } }

    @Test("take passes the error on when the source fails first")
    func error() { expectForwardsError({ $0.take(5) }, sending: [1, 2], expecting: [1, 2]) }

    @Test("take ignores the source's values sent from inside its observer after the last one")
    func reentrantAfterLast() {
        let subject = PublishSubject<Int>()
        let recorded = Shared<[Event<Int>]>([])
        let subscription = subject.take(1).subscribe { event in
            recorded.value.append(event)
            if case .next = event { subject.send(99) }
        }
        subject.send(1)
        #expect(recorded.value == [.next(1), .completed])
        withExtendedLifetime(subscription) {}
    }

    @Test("take on a synchronous source sends its count and completes")
    func synchronousSource() {
        #expect(Recorder(Observable.from(1...100).take(3)).events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test("take stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.take(10) } }

    @Test("take releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.take(10) }
    }

    @Test("take releases what the chain captured once it has its count")
    func releasesAfterCount() {
        let subject = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = subject.map { [token] in $0 + token!.id }.take(2).subscribe { _ in }
        token = nil
        subject.send(1)
        #expect(weakToken != nil)
        subject.send(2)
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }

    @Test("take with a negative count stops the process with a message naming the argument")
    func negativeCount() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PublishSubject<Int>().take(-1)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("take(_:)") && message.contains("count"), "message: \(message)")
        #endif
    }
}

@Suite("take on synchronous sources")
struct TakeSynchronousSourceTests {
    @Test("take stops pulling a synchronous source once it has its count")
    func stopsPulling() {
        let pulled = Shared(0)
        let numbers = (1...10_000).lazy.map { value -> Int in
            pulled.value += 1
            return value
        }
        let recorder = Recorder(Observable.from(numbers).take(3))
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
        // The loop pulls the next element before it sees that the emitter was stopped.
        #expect(pulled.value <= 4, "pulled \(pulled.value) elements for take(3)")
    }

    @Test("take stops an endless synchronous sequence, also through value-stage operators")
    func endlessSequence() {
        let endless = Observable.from(sequence(first: 1) { $0 + 1 })
        #expect(Recorder(endless.take(3)).events == [.next(1), .next(2), .next(3), .completed])
        let staged = endless.map { $0 * 10 }.filter { $0 % 20 == 0 }.compactMap { $0 }.scan(0, +)
            .distinctUntilChanged().take(2)
        #expect(Recorder(staged).events == [.next(20), .next(60), .completed])
        #expect(Recorder(endless.skip(2).take(2)).events == [.next(3), .next(4), .completed])
        #expect(Recorder(endless.startWith(0).take(3)).events == [.next(0), .next(1), .next(2), .completed])
    }

    @Test("a take further down stops the source through an earlier take")
    func nestedTakes() {
        let pulled = Shared(0)
        let numbers = sequence(first: 1) { value in
            pulled.value += 1
            return value + 1
        }
        #expect(Recorder(Observable.from(numbers).take(5).take(3)).values == [1, 2, 3])
        #expect(pulled.value <= 3, "pulled \(pulled.value) elements for take(5).take(3)")
    }

    @Test("a create producer sees its emitter stop as soon as take has its count")
    func producerSeesTheStop() {
        let sentAfterStop = Shared(0)
        let counted = Observable<Int>.create { emitter in
            for value in 1...100 {
                if !emitter.isActive { sentAfterStop.value += 1 }
                emitter.send(value)
            }
            emitter.complete()
            return .empty
        }
        #expect(Recorder(counted.take(2)).values == [1, 2])
        // Every send after the second finds the emitter stopped.
        #expect(sentAfterStop.value == 98)
    }

    @Test("take(0) and a take that ends before its count still end once, and cancel releases the producer")
    func endsOnce() {
        #expect(Recorder(Observable.of(1, 2).take(5)).events == [.next(1), .next(2), .completed])
        #expect(Recorder(Observable<Int>.failure(TestError()).take(1)).events == [.error(TestError())])
        var token: Token? = Token()
        weak let weakToken = token
        let recorder = Recorder(Observable<Int>.create { [token] emitter in
            _ = token
            emitter.send(1)
            return .empty
        }.take(1))
        token = nil
        #expect(recorder.events == [.next(1), .completed])
        #expect(weakToken == nil)
    }
}
