import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// `catch` borrows its subscriber's observer while the stream is being subscribed, and the first
/// subscription made per value (as `flatMapLatest`'s inner stream) on the thread that made the stream uses
/// a link built into the stream. These tests check the cases where that must give way: events from
/// another thread during the subscribing call, several subscriptions of one stream, and the lifetime of
/// what the stream holds; each both ways a subscription can be served.
@Suite("catch: the borrowed observer and the built-in link")
struct CatchLinkTests {
    /// How a test subscribes a `catch` stream.
    enum Route: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Subscribed directly: a subscription made to last, served by a link of its own.
        case ownLink
        /// Subscribed per value, as `flatMapLatest` subscribes its inner streams: the first such
        /// subscription on the thread that made the stream is served by the link built into it.
        case builtInLink
        var testDescription: String { rawValue }

        /// `stream`, to be subscribed this way: through an observer marked per value, which the link
        /// keeps (not through `flatMapLatest`, whose own observer would hide what `catch` keeps).
        func route(_ stream: Observable<Int>) -> Observable<Int> {
            switch self {
            case .ownLink: stream
            case .builtInLink:
                Observable.recipe({ observer in
                    stream.attach(Observer(next: observer.next, end: observer.end, perValue: true))
                })
            }
        }
    }

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
        _ route: Route, subscriberWaits: Bool, capturing token: Token?,
        _ body: @escaping @Sendable ((Event<Int>) -> Void) -> Void,
        handler: @escaping (any Error) -> Observable<Int>
    ) -> [Event<Int>] {
        let senderDone = DispatchSemaphore(value: 0)
        let received = Lock<[Event<Int>]>([])
        let subscription = route.route(fromAnotherThread(waits: subscriberWaits, senderDone: senderDone, body)
            .catch(handler))
            .subscribe { [token] event in
                withExtendedLifetime(token) { received.withLock { $0.append(event) } }
            }
        senderDone.wait()
        return withExtendedLifetime(subscription) { received.withLock { $0 } }
    }

    @Test(
        "events another thread sends while the stream is being subscribed arrive in order, and the observer is let go of after the end",
        arguments: Route.allCases, [false, true])
    func otherThreadDuringSubscribe(route: Route, subscriberWaits: Bool) {
        for _ in 0..<200 {
            var token: Token? = Token()
            weak let weakToken = token
            let received = receive(route, subscriberWaits: subscriberWaits, capturing: token.take()) { send in
                for value in 0..<50 { send(.next(value)) }
                send(.completed)
            } handler: { _ in Observable.just(-1) }
            #expect(received == (0..<50).map { .next($0) } + [.completed])
            #expect(weakToken == nil, "after the end, the link holds no copy of the observer")
        }
    }

    @Test(
        "a failure another thread sends while the stream is being subscribed continues with the fallback",
        arguments: Route.allCases, [false, true])
    func otherThreadFailsDuringSubscribe(route: Route, subscriberWaits: Bool) {
        for _ in 0..<200 {
            let handled = AtomicCounter()
            let received = receive(route, subscriberWaits: subscriberWaits, capturing: nil) { send in
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

    @Test("one stream subscribed several times, on the thread that made it and on another, serves each on its own",
          arguments: Route.allCases)
    func severalSubscriptions(route: Route) {
        let source = PublishSubject<Int>()
        let stream = source.catch { _ in Observable.just(-1) }
        // Per value, the first on this thread uses the built-in link; the second here, and the one on
        // another thread, make their own.
        let first = Recorder(route.route(stream))
        let elsewhere = onAnotherThread { Recorder(route.route(stream)) }
        let second = Recorder(route.route(stream))
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

    @Test("cancelling the first subscription through its handle stops it, and the others go on",
          arguments: Route.allCases)
    func cancelFirst(route: Route) {
        let source = PublishSubject<Int>()
        let stream = source.catch { _ in Observable.just(-1) }
        let first = Recorder(route.route(stream))
        let second = Recorder(route.route(stream))
        source.send(1)
        first.cancel()
        #expect(source.core.observers.members.count == 1)
        source.send(2)
        #expect(first.values == [1])
        #expect(second.values == [1, 2])
    }

    @Test("a running first subscription per value is served by the stream itself; once it ends, its kept handle holds nothing of it",
          arguments: Route.allCases)
    func firstHandleIsWeak(route: Route) {
        let source = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        // The stream's recipe (its upstream) holds the token: it lives as long as the stream's object.
        var stream: Observable<Int>? = Observable<Int>.recipe({ [token] observer in
            withExtendedLifetime(token) { source.attach(observer) }
        }).catch { _ in Observable.just(0) }
        token = nil
        let subscription = route.route(stream!).subscribe { _ in }
        stream = nil
        // Per value, the stream's object is the subscription's link, which the source's observer holds;
        // a link of its own does not hold the stream.
        #expect((weakToken != nil) == (route == .builtInLink))
        source.complete()
        #expect(weakToken == nil, "the handle must not keep the stream, nor what its recipe captured")
        withExtendedLifetime(subscription) {}
    }

    @Test("one stream subscribed from eight threads at once gives every subscription all its events",
          arguments: Route.allCases)
    func concurrentSubscriptions(route: Route) {
        let stream = route.route(Observable.from(Array(0..<20)).catch { _ in Observable.just(-1) })
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
        arguments: Route.allCases, [false, true])
    func cancelReleasesWhileStreamLives(route: Route, dropHandle: Bool) {
        let source = PublishSubject<Int>()
        var observerToken: Token? = Token()
        var handlerToken: Token? = Token()
        weak let weakObserverToken = observerToken
        weak let weakHandlerToken = handlerToken
        let stream = source.catch { [handlerToken] _ in Observable.just(handlerToken?.id ?? 0) }
        var subscription: Subscription? = route.route(stream).subscribe { [observerToken] _ in
            withExtendedLifetime(observerToken) {}
        }
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

    @Test("a cancel racing with deliveries from another thread stops them and lets go of the observer once they are over",
          arguments: Route.allCases)
    func cancelRacingDeliveries(route: Route) {
        for _ in 0..<200 {
            let source = PublishSubject<Int>()
            let stream = source.catch { _ in Observable.just(-1) }
            var token: Token? = Token()
            weak let weakToken = token
            let afterCancel = Atomic<Bool>(false)
            let lateValues = AtomicCounter()
            let subscription = route.route(stream).subscribe { [token] _ in
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

    @Test("a fallback that ends while being subscribed is let go of at once, and so is a stream that ends later, while the stream lives on",
          arguments: Route.allCases)
    func endedSubscriptionsLetGo(route: Route) {
        let cleaned = Shared(0)
        let fallback = Observable<Int> { send in
            send(.next(7))
            send(.completed)
            return Subscription { cleaned.value += 1 }
        }
        let recovered = Observable<Int>.failure(TestError()).catch { _ in fallback }
        let recorder = Recorder(route.route(recovered))
        #expect(recorder.events == [.next(7), .completed])
        #expect(cleaned.value == 1, "the ended fallback's subscription must not wait for the stream's end")

        let later = Shared<((Event<Int>) -> Void)?>(nil)
        let upstream = Observable<Int> { send in
            later.value = send
            return Subscription { cleaned.value += 10 }
        }
        let stream = upstream.catch { _ in Observable.just(-1) }
        let running = Recorder(route.route(stream))
        later.value?(.next(1))
        later.value?(.completed)
        later.value = nil
        #expect(running.events == [.next(1), .completed])
        #expect(cleaned.value == 11, "the ended stream's subscription must not wait for the handle or the stream")
        withExtendedLifetime((recovered, stream)) {}
    }

    @Test("a cancel from inside the observer stops a synchronous fallback where it is", arguments: Route.allCases)
    func cancelStopsSynchronousFallback(route: Route) {
        let source = PublishSubject<Int>()
        let received = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = route.route(source.catch { _ in Observable.of(1, 2, 3) }).observe { value in
            received.value.append(value)
            subscription.value?.cancel()
        }
        source.fail(TestError())
        #expect(received.value == [1])
    }

    @Test("a subscription that runs on gets every value, then the fallback's", arguments: Route.allCases, [false, true])
    func longLivedValues(route: Route, firstSubscription: Bool) {
        let source = PublishSubject<Int>()
        let stream = source.catch { _ in Observable.of(-1) }
        if !firstSubscription { route.route(stream).observe { _ in }.cancel() }
        let recorder = Recorder(route.route(stream))
        for value in 0..<100 { source.send(value) }
        source.fail(TestError())
        #expect(recorder.events == (0..<100).map { .next($0) } + [.next(-1), .completed])
        #expect(source.core.observers.members.count == 0)
    }

    @Test("flatMapLatest's inner catch streams, which use the built-in link, recover and switch as they should")
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
        #expect(inner.core.observers.members.count == 0)
    }
}
