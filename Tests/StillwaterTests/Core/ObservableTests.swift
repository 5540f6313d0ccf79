import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Observable")
struct ObservableTests {
    @Test("of sends each value in order then completes")
    func ofSendsValues() {
        let recorder = Recorder(Observable.of(1, 2, 3))
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test("from sends the elements of a sequence then completes", arguments: [[], [7], [1, 2, 3, 4]])
    func fromSequence(elements: [Int]) {
        let recorder = Recorder(Observable.from(elements))
        #expect(recorder.events == elements.map(Event.next) + [.completed])
    }

    @Test("just sends one value then completes")
    func justSendsOne() {
        #expect(Recorder(Observable.just("a")).events == [.next("a"), .completed])
    }

    @Test("just behind take(1) completes once, and behind take(2) completes when it does")
    func justBehindTake() {
        #expect(Recorder(Observable.just(4).take(1)).events == [.next(4), .completed])
        #expect(Recorder(Observable.just(4).take(2)).events == [.next(4), .completed])
        let values = Recorder(Observable.just(4).flatMapLatest { Observable.of($0, $0 + 1) })
        #expect(values.events == [.next(4), .next(5), .completed])
    }

    @Test("empty completes at once without values")
    func emptyCompletes() {
        #expect(Recorder(Observable<Int>.empty()).events == [.completed])
    }

    @Test("never sends nothing")
    func neverSendsNothing() {
        #expect(Recorder(Observable<Int>.never()).events.isEmpty)
    }

    @Test("failure fails at once with its error")
    func failureFails() {
        let recorder = Recorder(Observable<Int>.failure(TestError(code: 9)))
        #expect(recorder.events == [.error(TestError(code: 9))])
    }

    @Test("just, empty, failure and never hand back the shared empty subscription, directly and through an operator")
    func constantSourcesReturnEmpty() {
        let sources: [Observable<Int>] = [.just(1), .empty(), .failure(TestError()), .never()]
        for source in sources {
            #expect(source.subscribe { _ in } === Subscription.empty)
            #expect(source.observe { _ in } === Subscription.empty)
            #expect(source.map { $0 + 1 }.observe { _ in } === Subscription.empty)
        }
        // flatMapLatest keeps nothing of an inner stream that hands back nothing: a later value switches
        // cleanly, and cancelling the result ends the outer subscription.
        let outer = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { $0 == 0 ? Observable<Int>.never() : .just($0) })
        outer.send(0)
        outer.send(5)
        #expect(recorder.events == [.next(5)])
        recorder.cancel()
        #expect(outer.core.observerCount == 0)
    }

    @Test("a cold observable runs its recipe once per subscriber")
    func coldPerSubscriber() {
        let runs = Shared(0)
        let source = Observable<Int>.create { emitter in
            runs.value += 1
            emitter.send(runs.value)
            emitter.complete()
            return .empty
        }
        let first = Recorder(source)
        let second = Recorder(source)
        #expect(runs.value == 2)
        #expect(first.values == [1])
        #expect(second.values == [2])
    }

    @Test("create cancels the producer's subscription when the subscriber cancels")
    func createCancelsProducer() {
        let cancelled = Shared(0)
        let subscription = Observable<Int>.create { _ in
            Subscription { cancelled.value += 1 }
        }.subscribe { _ in }
        #expect(cancelled.value == 0)
        subscription.cancel()
        subscription.cancel()
        #expect(cancelled.value == 1)
    }

    @Test("observe calls its closure for values only")
    func observeValuesOnly() {
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        let subscription = subject.observe { seen.value.append($0) }
        subject.send(1)
        subject.send(2)
        subject.fail(TestError())
        #expect(seen.value == [1, 2])
        withExtendedLifetime(subscription) {}
    }

    @Test("subscribe(onNext:onError:onCompleted:) calls the handler that matches each event")
    func subscribeHandlers() {
        let subject = PublishSubject<Int>()
        let log = Shared<[String]>([])
        let subscription = subject.subscribe(
            onNext: { log.value.append("next \($0)") },
            onError: { log.value.append("error \($0)") },
            onCompleted: { log.value.append("completed") })
        subject.send(1)
        subject.complete()
        #expect(log.value == ["next 1", "completed"])

        let failing = PublishSubject<Int>()
        let errorLog = Shared<[String]>([])
        let other = failing.subscribe(onError: { errorLog.value.append("error \($0)") })
        failing.send(1)
        failing.fail(TestError(code: 5))
        #expect(errorLog.value == ["error TestError(5)"])
        withExtendedLifetime((subscription, other)) {}
    }

    @Test("asObservable of a subject delivers the subject's events")
    func asObservableForwards() {
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.asObservable())
        subject.send(4)
        subject.complete()
        #expect(recorder.events == [.next(4), .completed])
    }

    @Test("a synchronous source cut short by take sends nothing after the terminal event")
    func syncSourceCutShort() {
        let recorder = Recorder(Observable.from(1...5).take(2))
        #expect(recorder.events == [.next(1), .next(2), .completed])
    }
}

@Suite("Observable.create lifetimes")
struct CreateLifetimeTests {
    @Test("create releases what its producer's subscription holds when the emitter completes")
    func releasesProducerOnCompletion() {
        let emitter = Shared<Emitter<Int>?>(nil)
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = Observable<Int>.create { [token] e in
            emitter.value = e
            return Subscription { _ = token }
        }.observe { _ in }
        token = nil
        emitter.value?.send(1)
        #expect(weakToken != nil)
        emitter.value?.complete()
        emitter.value = nil
        #expect(weakToken == nil, "the producer's cleanup is kept until the subscriber releases its subscription")
        withExtendedLifetime(subscription) {}
    }

    @Test("create releases the observer chain when the emitter completes")
    func releasesObserverOnCompletion() {
        let emitter = Shared<Emitter<Int>?>(nil)
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = Observable<Int>.create { e in
            emitter.value = e
            return .empty
        }.map { [token] in $0 + token!.id }.observe { _ in }
        token = nil
        emitter.value?.send(1)
        #expect(weakToken != nil)
        emitter.value?.complete()
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }
}

/// A user's conformance with only `subscribe(_:)`: operators reach it through the default `asObservable()`.
private struct Counting: ObservableType {
    let subject = PublishSubject<Int>()
    let subscriptions = AtomicCounter()

    func subscribe(_ observer: @escaping (Event<Int>) -> Void) -> Subscription {
        subscriptions.increment()
        return subject.subscribe(observer)
    }
}

@Suite("User conformances")
struct UserConformanceTests {
    @Test("operators and observe subscribe to a user's type through its subscribe, once per subscriber")
    func operatorsUseSubscribe() {
        let source = Counting()
        let chain = source.map { $0 + 1 }.filter { $0 > 0 }.distinctUntilChanged()
        #expect(source.subscriptions.value == 0)
        let mapped = Recorder(chain)
        let observed = Mutex<[Int]>([])
        let subscription = source.observe { value in observed.withLock { $0.append(value) } }
        #expect(source.subscriptions.value == 2)
        source.subject.send(1)
        source.subject.send(1)
        source.subject.send(5)
        source.subject.complete()
        #expect(mapped.values == [2, 6])
        #expect(mapped.isCompleted)
        #expect(observed.withLock { $0 } == [1, 1, 5])
        subscription.cancel()
    }
}
