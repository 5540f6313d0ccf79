import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// `catch` under threads and lifetimes: events from another thread during the subscribing call, several
/// subscriptions of one stream, cancels racing deliveries, and what a subscription keeps after its end or
/// cancel.
@Suite("catch: threads and lifetimes")
struct CatchConcurrencyTests {
    /// A stream whose events another thread sends, starting while the stream is being subscribed. The
    /// subscribing call waits for that thread if `waits`; `senderDone` is signalled when it has returned
    /// and let go of its observer, as a source does after its end.
    func fromAnotherThread(
        waits: Bool, senderDone: DispatchSemaphore, _ body: @escaping @Sendable ((Event<Int>) -> Void) -> Void
    ) -> Observable<Int> {
        Observable { send in
            let send = Shared<((Event<Int>) -> Void)?>(send)
            let started = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                started.signal()
                body(send.value!)
                send.value = nil
                senderDone.signal()
            }
            started.wait()
            if waits {
                senderDone.wait()
                senderDone.signal()
            }
            return Subscription.empty
        }
    }

    /// Subscribes `stream.catch(handler)`, where another thread sends `body`'s events while (and, unless
    /// `subscriberWaits`, perhaps after) the stream is being subscribed, with an observer that captures
    /// `token`; returns what the observer received once that thread has returned.
    func receive(
        subscriberWaits: Bool, capturing token: Token?,
        _ body: @escaping @Sendable ((Event<Int>) -> Void) -> Void,
        handler: @escaping (any Error) -> Observable<Int>
    ) -> [Event<Int>] {
        let senderDone = DispatchSemaphore(value: 0)
        let received = Lock<[Event<Int>]>([])
        let subscription = fromAnotherThread(waits: subscriberWaits, senderDone: senderDone, body)
            .catch(handler)
            .subscribe { [token] event in
                withExtendedLifetime(token) { received.withLock { $0.append(event) } }
            }
        senderDone.wait()
        return withExtendedLifetime(subscription) { received.withLock { $0 } }
    }

    @Test(
        "events another thread sends while the stream is being subscribed arrive in order, and the observer is let go of after the end",
        arguments: [false, true])
    func otherThreadDuringSubscribe(subscriberWaits: Bool) {
        for _ in 0..<200 {
            var token: Token? = Token()
            weak let weakToken = token
            let received = receive(subscriberWaits: subscriberWaits, capturing: token.take()) { send in
                for value in 0..<50 { send(.next(value)) }
                send(.completed)
            } handler: { _ in Observable.just(-1) }
            #expect(received == (0..<50).map { .next($0) } + [.completed])
            #expect(weakToken == nil, "after the end, the link holds no copy of the observer")
        }
    }

    @Test(
        "a failure another thread sends while the stream is being subscribed continues with the fallback",
        arguments: [false, true])
    func otherThreadFailsDuringSubscribe(subscriberWaits: Bool) {
        for _ in 0..<200 {
            let handled = AtomicCounter()
            let received = receive(subscriberWaits: subscriberWaits, capturing: nil) { send in
                send(.next(1))
                send(.error(TestError()))
            } handler: { _ in
                handled.increment()
                return Observable.of(7, 8)
            }
            #expect(received == [.next(1), .next(7), .next(8), .completed])
            #expect(handled.value == 1)
        }
    }

    @Test("one stream subscribed several times, on the thread that made it and on another, serves each on its own")
    func severalSubscriptions() {
        let source = PublishSubject<Int>()
        let stream = source.catch { _ in Observable.just(-1) }
        let first = Recorder(stream)
        let elsewhere = onAnotherThread { Recorder(stream) }
        let second = Recorder(stream)
        source.send(1)
        elsewhere.cancel()
        source.send(2)
        source.fail(TestError())
        #expect(first.events == [.next(1), .next(2), .next(-1), .completed])
        #expect(elsewhere.events == [.next(1)])
        #expect(second.events == [.next(1), .next(2), .next(-1), .completed])
        #expect(source.core.observerCount == 0)
    }

    /// `body`'s result, run on a thread of its own (not the caller's, as `DispatchQueue.sync` may do).
    func onAnotherThread<Result>(_ body: @escaping () -> Result) -> Result {
        let result = Shared<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        let work = Shared(body)
        Thread.detachNewThread {
            result.value = work.value()
            done.signal()
        }
        done.wait()
        return result.value!
    }

    @Test("cancelling the first subscription through its handle stops it, and the others go on")
    func cancelFirst() {
        let source = PublishSubject<Int>()
        let stream = source.catch { _ in Observable.just(-1) }
        let first = Recorder(stream)
        let second = Recorder(stream)
        source.send(1)
        first.cancel()
        #expect(source.core.observerCount == 1)
        source.send(2)
        #expect(first.values == [1])
        #expect(second.values == [1, 2])
    }

    @Test("a subscription holds nothing of the stream it was made from")
    func firstHandleIsWeak() {
        let source = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        // The stream's recipe (its upstream) holds the token: it lives as long as the stream's object.
        var stream: Observable<Int>? = Observable<Int>.recipe({ [token] observer in
            withExtendedLifetime(token) { source.attach(observer) }
        }).catch { _ in Observable.just(0) }
        token = nil
        let subscription = stream!.subscribe { _ in }
        stream = nil
        #expect(weakToken == nil, "a subscription does not hold the stream it was made from")
        source.complete()
        #expect(weakToken == nil, "the handle must not keep the stream, nor what its recipe captured")
        withExtendedLifetime(subscription) {}
    }

    @Test("one stream subscribed from eight threads at once gives every subscription all its events")
    func concurrentSubscriptions() {
        let stream = Observable.from(Array(0..<20)).catch { _ in Observable.just(-1) }
        let wrong = AtomicCounter()
        let expected: [Event<Int>] = (0..<20).map { .next($0) } + [.completed]
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<300 where Recorder(stream).events != expected {
                wrong.increment()
            }
        }
        #expect(wrong.value == 0)
        #expect(Recorder(stream).events == expected)
    }

    @Test(
        "cancelling the first subscription, or dropping its handle, lets go of the observer and the handler while the stream lives on",
        arguments: [false, true])
    func cancelReleasesWhileStreamLives(dropHandle: Bool) {
        let source = PublishSubject<Int>()
        var observerToken: Token? = Token()
        var handlerToken: Token? = Token()
        weak let weakObserverToken = observerToken
        weak let weakHandlerToken = handlerToken
        let stream = source.catch { [handlerToken] _ in Observable.just(handlerToken?.id ?? 0) }
        var subscription: Subscription? = stream.subscribe { [observerToken] _ in
            withExtendedLifetime(observerToken) {}
        }
        observerToken = nil
        handlerToken = nil
        source.send(1)
        #expect(weakObserverToken != nil)
        if dropHandle { subscription = nil } else { subscription?.cancel() }
        #expect(weakObserverToken == nil, "the stream must not keep a cancelled subscription's observer")
        #expect(weakHandlerToken != nil, "the stream itself still holds its handler")
        #expect(source.core.observerCount == 0)
        withExtendedLifetime((stream, subscription)) {}
    }

    @Test("a cancel racing with deliveries from another thread stops them and lets go of the observer once they are over")
    func cancelRacingDeliveries() {
        for _ in 0..<200 {
            let source = PublishSubject<Int>()
            let stream = source.catch { _ in Observable.just(-1) }
            var token: Token? = Token()
            weak let weakToken = token
            let afterCancel = Atomic<Bool>(false)
            let lateValues = AtomicCounter()
            let subscription = stream.subscribe { [token] _ in
                withExtendedLifetime(token) {}
                if afterCancel.load(ordering: .acquiring) { lateValues.increment() }
            }
            token = nil
            let senderDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                for value in 0..<300 { source.send(value) }
                senderDone.signal()
            }
            subscription.cancel()
            afterCancel.store(true, ordering: .releasing)
            senderDone.wait()
            #expect(lateValues.value <= 1, "at most the delivery running during the cancel ends after it")
            #expect(weakToken == nil)
            withExtendedLifetime(stream) {}
        }
    }

    @Test("a fallback that ends while being subscribed is let go of at once, and so is a stream that ends later, while the stream lives on")
    func endedSubscriptionsLetGo() {
        let cleaned = Shared(0)
        let fallback = Observable<Int> { send in
            send(.next(7))
            send(.completed)
            return Subscription { cleaned.value += 1 }
        }
        let recovered = Observable<Int>.failure(TestError()).catch { _ in fallback }
        let recorder = Recorder(recovered)
        #expect(recorder.events == [.next(7), .completed])
        #expect(cleaned.value == 1, "the ended fallback's subscription must not wait for the stream's end")

        let later = Shared<((Event<Int>) -> Void)?>(nil)
        let upstream = Observable<Int> { send in
            later.value = send
            return Subscription { cleaned.value += 10 }
        }
        let stream = upstream.catch { _ in Observable.just(-1) }
        let running = Recorder(stream)
        later.value?(.next(1))
        later.value?(.completed)
        later.value = nil
        #expect(running.events == [.next(1), .completed])
        #expect(cleaned.value == 11, "the ended stream's subscription must not wait for the handle or the stream")
        withExtendedLifetime((recovered, stream)) {}
    }

    @Test("a cancel from inside the observer stops a synchronous fallback where it is")
    func cancelStopsSynchronousFallback() {
        let source = PublishSubject<Int>()
        let received = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = source.catch { _ in Observable.of(1, 2, 3) }.observe { value in
            received.value.append(value)
            subscription.value?.cancel()
        }
        source.fail(TestError())
        #expect(received.value == [1])
    }

    @Test("a subscription that runs on gets every value, then the fallback's", arguments: [false, true])
    func longLivedValues(firstSubscription: Bool) {
        let source = PublishSubject<Int>()
        let stream = source.catch { _ in Observable.of(-1) }
        if !firstSubscription { stream.observe { _ in }.cancel() }
        let recorder = Recorder(stream)
        for value in 0..<100 { source.send(value) }
        source.fail(TestError())
        #expect(recorder.events == (0..<100).map { .next($0) } + [.next(-1), .completed])
        #expect(source.core.observerCount == 0)
    }

    @Test("flatMapLatest's inner catch streams recover and switch as they should")
    func throughFlatMapLatest() {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapLatest { value in
            (value == 2 ? inner.asObservable() : value == 3 ? Observable<Int>.failure(TestError()) : .just(value))
                .catch { _ in Observable.just(-value) }
        })
        outer.send(1)
        outer.send(2)
        inner.send(20)
        inner.fail(TestError())
        outer.send(3)
        outer.send(4)
        outer.complete()
        #expect(recorder.events == [.next(1), .next(20), .next(-2), .next(-3), .next(4), .completed])
        #expect(inner.core.observerCount == 0)
    }
}
