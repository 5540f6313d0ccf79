import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// `catch` borrows its subscriber's observer while the stream is being subscribed, and the first
/// subscription made on the thread that made the stream uses a link built into the stream. These tests
/// check the cases where that must give way: events from another thread during the subscribing call,
/// several subscriptions of one stream, and the lifetime of what the stream holds.
@Suite("catch: the borrowed observer and the built-in link")
struct CatchLinkTests {
    /// A stream whose events another thread sends, starting while the stream is being subscribed. The
    /// subscribing call waits for that thread if `waits`; `senderDone` is signalled when it has returned.
    func fromAnotherThread(
        waits: Bool, senderDone: DispatchSemaphore, _ body: @escaping @Sendable ((Event<Int>) -> Void) -> Void
    ) -> Observable<Int> {
        Observable { send in
            let send = Shared(send)
            let started = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                started.signal()
                body(send.value)
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
        // The first on this thread uses the built-in link; the second here, and the one on another
        // thread, make their own.
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
        #expect(source.core.observers.members.count == 0)
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
        #expect(source.core.observers.members.count == 1)
        source.send(2)
        #expect(first.values == [1])
        #expect(second.values == [1, 2])
    }

    @Test("a running first subscription keeps its stream; once it ends, its kept handle holds nothing of it")
    func firstHandleIsWeak() {
        let source = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        var stream: Observable<Int>? = source.catch { [token] _ in Observable.just(token?.id ?? 0) }
        token = nil
        let subscription = stream!.subscribe { _ in }
        stream = nil
        #expect(weakToken != nil, "the source holds the running subscription's observer, which holds the stream")
        source.complete()
        #expect(weakToken == nil, "the handle must not keep the stream, nor what its handler captured")
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
        var subscription: Subscription? = stream.subscribe { [observerToken] _ in withExtendedLifetime(observerToken) {} }
        observerToken = nil
        handlerToken = nil
        source.send(1)
        #expect(weakObserverToken != nil)
        if dropHandle { subscription = nil } else { subscription?.cancel() }
        #expect(weakObserverToken == nil, "the stream must not keep a cancelled subscription's observer")
        #expect(weakHandlerToken != nil, "the stream itself still holds its handler")
        #expect(source.core.observers.members.count == 0)
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
}
