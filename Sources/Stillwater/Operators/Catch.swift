import Synchronization

extension ObservableType {
    /// Recovers from a failure: when this stream fails, continues with the stream `handler` makes from
    /// the error. Its values follow the ones already sent, and its end is the end.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let pages = PublishSubject<String>()
    /// let subscription = pages
    ///     .catch { _ in Observable.of("cached page") }
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// pages.send("page 1")
    /// pages.fail(Offline())
    /// // Prints "page 1", "cached page", "done"
    /// ```
    ///
    /// - A completion passes through; `handler` runs only on a failure, at most once per subscription,
    ///   on the thread that delivered the failure.
    /// - To fail after all (an error you do not recover from), return ``Observable/failure(_:)``.
    /// - To try the same stream again instead, use ``retry(_:)``.
    /// - Cancelling cancels this stream or, after a failure, the fallback.
    /// - A running subscription may keep the `catch` stream (this stream and `handler`) alive; once it
    ///   ends or is cancelled, neither it nor the ``Subscription`` returned holds anything of them, and
    ///   the stream holds nothing of the subscription.
    /// - Complexity: a subscription costs one object and the ``Subscription`` returned, and this
    ///   stream's values go straight to the observer, with nothing added per value. When this stream
    ///   (and the fallback, if any) ends while being subscribed, the subscription returned is
    ///   ``Subscription/empty`` and nothing is kept. An operator that subscribes a new stream per value
    ///   (`flatMapLatest`) has its first subscription, made on the thread that made this `catch` stream,
    ///   served by the result's own object: a stream made, subscribed and ended per value costs no
    ///   object beyond the result, and, unless it failed, retains none of the observer's closures. If
    ///   such a subscription runs on past the subscribe call, each of its values costs two atomic
    ///   operations more (so that a cancel can let go of the observer while the stream lives on).
    @inlinable
    public func `catch`<Fallback: ObservableType>(
        _ handler: @escaping (any Error) -> Fallback
    ) -> Observable<Value> where Fallback.Value == Value {
        let source = CatchSource(self, handler)
        return Observable.recipe({ [source] observer in source.subscribe(observer) })
    }

    /// Recovers from a failure by sending `value`, then completing.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let requests = PublishSubject<Int>()
    /// let subscription = requests.catchAndReturn(0)
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// requests.send(3)
    /// requests.fail(Offline())
    /// // Prints "3", "0", "done"
    /// ```
    ///
    /// The same as ``replaceError(with:)``; the two names are the ones RxSwift and Combine users know.
    public func catchAndReturn(_ value: Value) -> Observable<Value> {
        self.catch { _ in Observable.just(value) }
    }

    /// Replaces a failure with `value`, then completes; the same as ``catchAndReturn(_:)``.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let status = PublishSubject<String>()
    /// let subscription = status.replaceError(with: "offline").observe { print($0) }
    /// status.send("online")
    /// status.fail(Offline())
    /// // Prints "online", "offline"
    /// ```
    public func replaceError(with value: Value) -> Observable<Value> {
        catchAndReturn(value)
    }

    /// This stream as one that never fails: a failure is replaced by `value`, then the stream completes.
    ///
    /// The result is an ``Infallible``, so a `for await` loop over its ``InfallibleType/values`` needs no
    /// `try`, and the operators that cannot fail keep it infallible.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let readings = PublishSubject<Int>()
    /// let display = readings.asInfallible(onErrorJustReturn: -1).map { "\($0) °C" }
    /// let subscription = display.observe { print($0) }
    /// readings.send(21)
    /// readings.fail(Offline())
    /// // Prints "21 °C", "-1 °C"
    /// ```
    public func asInfallible(onErrorJustReturn value: Value) -> Infallible<Value> {
        Infallible(never: catchAndReturn(value))
    }
}

/// One `catch` subscription: a slot holding this stream's subscription, then the fallback's in its place,
/// and whether the observer has had its terminal event. A link of its own hands this stream the
/// subscriber's `next` itself (the upstream observer holds a copy), so a subscription that runs on costs
/// nothing per value; only the end comes through the link, whose upstream closure captures the link alone,
/// so subscribing costs this one object.
///
/// While this stream is being subscribed, the link *borrows* the subscriber's observer (a pointer to it,
/// valid until the subscribing call returns) instead of keeping copies of its closures, which would cost a
/// retain and a release of each (for a link of its own that is `end`'s; the upstream observer's copy of
/// `next` is retained as any copy is). It keeps copies (``keepObserver()``, under the slot's lock) as soon as
/// the observer may be needed after that call: when the call returns with this stream still running,
/// when this stream fails (the fallback may end later), or when an event for the link arrives on another
/// thread while the call is still running (``isBorrowing`` tells; that thread cannot know when the pointer
/// stops being valid, so it copies first, and the subscribing thread takes the same lock before it
/// returns with the stream running). An event on the subscribing thread during the call uses the pointer.
/// When the call returns after the end, the link stops borrowing: an upstream that broke its contract and
/// sent after its end, on that thread, finds no observer. (From another thread at that moment, nothing is
/// safe: an upstream never sends after its end.)
///
/// A link built into its stream (``CatchSource``) serves a subscription made per value
/// (``Observer/isPerValue``: `flatMapLatest`'s inner streams), which usually ends during the call. Its
/// values come through the link too, so that during the call they reach the borrowed observer and the
/// subscriber's `next` is never retained. It lives as long as the stream, so its subscription must let go
/// of the kept observer and handler when cancelled, not only at the end: it counts the deliveries that use
/// them rather than the borrowed observer (``isGuarded``, ``owners``; two atomic operations each, so a
/// value of such a subscription that runs on past the call costs that much more), and the cancel, or the
/// last such delivery running at the time, releases them, once, when none is left.
@usableFromInline
class CatchLink<Value, Fallback: ObservableType>: SubscriptionSlot, @unchecked Sendable
where Fallback.Value == Value {
    // @unchecked: the slot is locked and the flags atomic. The observer is copied in under the lock, once;
    // the handler and the copies are then touched by this stream's events and the fallback's, which come
    // one after the other, and (for a guarded link) by the release, which runs when no delivery does.
    /// The handler and the kept observer, let go of when the observer has had its terminal event, or (a
    /// guarded link) when the subscription is cancelled.
    @usableFromInline @exclusivity(unchecked) final var handler: ((any Error) -> Fallback)?
    @usableFromInline @exclusivity(unchecked) final var next: InPlaceClosure<Value, Void>?
    @usableFromInline @exclusivity(unchecked) final var end: ((Termination) -> Void)?
    /// The subscriber's observer, valid while the subscribing call runs; set before the upstream is
    /// subscribed (another thread reaches it only through the upstream's events), and used only while
    /// ``isBorrowing``.
    @usableFromInline @exclusivity(unchecked) final var borrowed: UnsafePointer<Observer<Value>>?
    /// The thread in the subscribing call; meaningful while ``isBorrowing``.
    @usableFromInline final let subscribingThread = Atomic<UInt>(0)
    @usableFromInline final let borrowing = Atomic<Bool>(true)
    @usableFromInline final let finished = Atomic<Bool>(false)
    /// Whether deliveries that use the kept observer are counted in ``owners`` (a built-in link).
    @usableFromInline final let isGuarded: Bool
    /// For a guarded link: the deliveries running, in steps of ``Owners/step``, with the
    /// ``Owners/cancelled`` and ``Owners/released`` flags.
    @usableFromInline final let owners = Atomic<Int>(0)

    @usableFromInline
    enum Owners {
        @usableFromInline static var cancelled: Int { 1 }
        @usableFromInline static var released: Int { 2 }
        @usableFromInline static var step: Int { 4 }
    }

    @inlinable
    init(_ handler: @escaping (any Error) -> Fallback, guarded: Bool) {
        self.handler = handler
        isGuarded = guarded
        super.init()
    }

    /// Subscribes `upstream` for `observer` through this link, on this thread: the link borrows
    /// `observer` while `upstream` is being subscribed, and keeps copies of its closures only if the
    /// subscription outlives this call, fails, or is ended from another thread meanwhile. `builtIn` (a
    /// literal at each call, so the optimiser keeps the two forms apart): the link is a ``CatchSource``'s;
    /// its values come through it, and the handle returned holds it weakly (it holds a recipe, which must
    /// not outlive the subscription's end in its handle).
    @inlinable @inline(__always)
    final func run<Upstream: ObservableType>(
        _ upstream: Upstream, _ observer: Observer<Value>, thread: UInt, builtIn: Bool
    ) -> Subscription? where Upstream.Value == Value {
        subscribingThread.store(thread, ordering: .relaxed)
        return withUnsafePointer(to: observer) { observer in
            borrowed = observer
            // A link of its own hands this stream the subscriber's `next` itself, so a subscription that
            // runs on costs nothing per value; a built-in link, made for subscriptions that end during
            // the call, takes the values too and sends them through the borrowed observer.
            let subscription = builtIn
                ? upstream.attach(Observer(next: { [self] in upstreamNext($0) }, end: { [self] in upstreamEnd($0) }))
                : upstream.attach(Observer(next: observer.pointee.next, end: { [self] in upstreamEnd($0) }))
            // Over while being subscribed (a synchronous stream, or a fallback that ended at once): nothing
            // is left to cancel, and the pointer dies now.
            if isFinished {
                borrowing.store(false, ordering: .relaxed)
                return nil
            }
            // The fallback, if this stream failed while being subscribed, is already in the slot and
            // stays: `fill` then cancels the subscription of the stream that failed. So does an end that
            // came meanwhile from another thread.
            var ended = false
            fill(with: subscription) {
                keepObserver()
                ended = isFinished
                return !ended
            }
            if ended { return nil }
            return builtIn ? Subscription(CatchHandle(self)) : Subscription(self)
        }
    }

    /// Whether the link still borrows the subscriber's observer (the subscribing call is running).
    @inlinable
    final var isBorrowing: Bool { borrowing.load(ordering: .acquiring) }

    /// Whether the observer has had its terminal event.
    @inlinable
    final var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Whether an event for the link that arrives now (an end; a value too, for a built-in link) may use
    /// the borrowed observer: only on the subscribing thread, during its call. On any other thread, the
    /// observer is kept first.
    @inlinable @inline(__always)
    final func mayUseBorrowed() -> Bool {
        guard isBorrowing else { return false }
        if subscribingThread.load(ordering: .relaxed) == currentThread() { return true }
        state.withLock { _ in keepObserver() }
        return false
    }

    /// Copies the borrowed observer into the link, once. Called with the slot's lock held, on the
    /// subscribing thread or by a thread that has an event of this stream while the call still runs.
    @inlinable
    final func keepObserver() {
        guard isBorrowing, let observer = borrowed?.pointee else { return }
        next = InPlaceClosure(observer.next)
        end = observer.end
        borrowing.store(false, ordering: .releasing)
    }

    /// Runs `body` with the borrowed observer, in place: through a noncopyable view of it, so that calling
    /// one of its closures costs no retain and release. Only where ``mayUseBorrowed()`` said yes.
    @inlinable @inline(__always)
    final func withBorrowed(_ body: (borrowing Observer<Value>) -> Void) {
        borrowed.unsafelyUnwrapped.withMemoryRebound(to: BorrowedObserver<Value>.self, capacity: 1) { view in
            // Alone in its case, so the observer is borrowed where it lies.
            switch view.pointee {
            case let view: body(view.observer)
            }
        }
    }

    /// Runs `body`, a delivery that uses the kept observer or handler: at once for a link that is not
    /// guarded; counted for a guarded one, and not at all once its subscription is cancelled.
    @inlinable @inline(__always)
    final func owned(_ body: () -> Void) {
        guard isGuarded else { return body() }
        guard owners.wrappingAdd(Owners.step, ordering: .acquiring).newValue & Owners.cancelled == 0 else {
            return leave()
        }
        body()
        leave()
    }

    /// Ends a counted delivery; the last one after a cancel releases what the subscription kept.
    @inlinable
    final func leave() {
        if owners.wrappingSubtract(Owners.step, ordering: .acquiringAndReleasing).newValue == Owners.cancelled {
            releaseKept()
        }
    }

    /// Lets go of the handler and the kept observer, once, when the subscription is cancelled and no
    /// delivery runs. (A guarded link only.)
    @usableFromInline @inline(never)
    final func releaseKept() {
        guard owners.compareExchange(
            expected: Owners.cancelled, desired: Owners.cancelled | Owners.released,
            ordering: .acquiringAndReleasing
        ).exchanged else { return }
        handler = nil
        next = nil
        end = nil
    }

    /// Cancels the subscription of a guarded link: this stream's or the fallback's, and what it kept.
    @usableFromInline
    final func cancelGuarded() {
        cancel()
        if owners.bitwiseOr(Owners.cancelled, ordering: .acquiringAndReleasing).newValue == Owners.cancelled {
            releaseKept()
        }
    }

    /// A value of this stream, for a built-in link: through the borrowed observer during the call, or the
    /// kept one (counted) after it.
    @inlinable
    final func upstreamNext(_ value: Value) {
        if mayUseBorrowed() {
            withBorrowed { $0.next(value) }
            return
        }
        owned {
            // The call is alone in its case, so the closure is borrowed where it lies, not copied.
            switch next {
            case .none: return
            case .some(let next): next.body(value)
            }
        }
    }

    @inlinable
    final func upstreamEnd(_ termination: Termination) {
        if case .failed(let error) = termination {
            owned { recover(from: error) }
        } else if mayUseBorrowed() {
            finish(termination, borrowed: true)
        } else {
            owned { finish(termination, borrowed: false) }
        }
    }

    /// Subscribes the fallback for `error`. Kept out of line: most streams do not fail.
    @inlinable @inline(never)
    final func recover(from error: any Error) {
        // The fallback may end after the subscribing call: the observer is kept.
        state.withLock { _ in keepObserver() }
        guard let handler = handler.take(), let callback = next.take() else { return }
        // The slot is the fallback's early slot: a synchronous fallback stops when the subscription is
        // cancelled while it sends (from inside the observer, say), instead of sending on to its end.
        // That needs the handle, so only for a failure after the subscribe call returned.
        let fallback = handler(error).attach(Observer(
            next: callback.body, end: { [self] termination in owned { finish(termination, borrowed: false) } },
            early: self))
        // `.empty` for a fallback that left nothing to cancel: the slot must hold something, so that the
        // subscribing call's `fill` (if the failure came during it) cancels the failed stream's subscription.
        replace(with: fallback ?? .empty)
        // Ended already (here, or on another thread before the line above): the slot lets go of it.
        if isFinished { replace(with: nil) }
    }

    /// Sends the terminal event, once, through the borrowed observer (`borrowed`: on the subscribing
    /// thread, during its call) or the kept one; a kept one then lets go of the subscription in its slot.
    @inlinable
    final func finish(_ termination: Termination, borrowed: Bool) {
        handler = nil
        next = nil
        if borrowed {
            guard !finished.load(ordering: .relaxed) else { return }
            finished.store(true, ordering: .releasing)
            withBorrowed { $0.end(termination) }
            return
        }
        finished.store(true, ordering: .releasing)
        guard let end = end.take() else { return }
        end(termination)
        replace(with: nil)
    }
}

/// What a `catch` stream is made of: the stream it recovers and the handler, and the link of one
/// subscription, so that a stream subscribed once, per value, where it was made (an inner stream of
/// `flatMapLatest`) costs one object, not two.
///
/// The built-in link is for the first subscription made per value (``Observer/isPerValue``) on the
/// thread that made the stream; others, and every subscription made to last, make their own. Only that
/// thread reads and writes ``firstLinkTaken``, so taking the link needs no atomic read-modify-write: no
/// other live thread has its identity, and a later thread that is given the same identity starts after it
/// ended (the thread library hands an identity on only through its own locks).
///
/// The built-in link lives as long as the stream, so it is guarded (see ``CatchLink``): a cancel lets go
/// of the observer and the handler it kept, even while the stream lives on. Its handle holds it weakly:
/// a handle kept after the end holds no recipe, which could hold the handle's owner (a cycle).
@usableFromInline
final class CatchSource<Upstream: ObservableType, Fallback: ObservableType>:
    CatchLink<Upstream.Value, Fallback>, @unchecked Sendable
where Fallback.Value == Upstream.Value {
    @usableFromInline let upstream: Upstream
    @usableFromInline let makeFallback: (any Error) -> Fallback
    /// The thread that made the stream.
    @usableFromInline let creator: UInt
    /// Whether the built-in link has been used. Touched only on ``creator``.
    @usableFromInline let firstLinkTaken = Atomic<Bool>(false)

    @inlinable
    init(_ upstream: Upstream, _ handler: @escaping (any Error) -> Fallback) {
        self.upstream = upstream
        makeFallback = handler
        creator = currentThread()
        super.init(handler, guarded: true)
    }

    @inlinable
    func subscribe(_ observer: Observer<Upstream.Value>) -> Subscription? {
        let thread = currentThread()
        if observer.isPerValue, thread == creator, !firstLinkTaken.load(ordering: .relaxed) {
            firstLinkTaken.store(true, ordering: .relaxed)
            return run(upstream, observer, thread: thread, builtIn: true)
        }
        return subscribeWithOwnLink(observer, thread: thread)
    }

    /// A subscription served by a link of its own. Out of line, so that the optimiser does not merge its
    /// upstream observer with the built-in link's, whose two captures of the link would then cost two
    /// retains and two releases instead of one each.
    @inlinable @inline(never)
    func subscribeWithOwnLink(_ observer: Observer<Upstream.Value>, thread: UInt) -> Subscription? {
        CatchLink<Upstream.Value, Fallback>(makeFallback, guarded: false)
            .run(upstream, observer, thread: thread, builtIn: false)
    }
}

/// The handle of a built-in link's subscription: cancels it without keeping the stream alive; see
/// ``CatchSource``.
@usableFromInline
final class CatchHandle<Value, Fallback: ObservableType>: Cancellable, Sendable where Fallback.Value == Value {
    @usableFromInline weak let link: CatchLink<Value, Fallback>?

    @inlinable
    init(_ link: CatchLink<Value, Fallback>) {
        self.link = link
    }

    @usableFromInline
    func cancel() {
        link?.cancelGuarded()
    }
}

/// An ``Observer`` seen through a pointer as a noncopyable value, so that calling its closures borrows
/// them in place (a copyable value read through a pointer is copied first: a retain and a release). A
/// struct with one stored property, so it is laid out as that property and a pointer to an `Observer`
/// can be rebound to it.
@usableFromInline
struct BorrowedObserver<Value>: ~Copyable {
    @usableFromInline let observer: Observer<Value>
}
