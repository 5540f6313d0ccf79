import Synchronization

/// Runs submitted work one item at a time, in submission order, on whichever thread is free to run it.
///
/// The operators that listen to several sources at once (`merge`, `combineLatest`, `flatMapLatest`) and
/// ``Emitter`` hand every upstream event to a serializer, so their own state is touched by one thread at
/// a time and their observer never receives two events at once, whichever threads the sources use. Like
/// a source, it never nests: work submitted while work runs is queued behind it.
///
/// `@unchecked Sendable`: `handler` and `buffer` belong to the thread that won its queue (checked in
/// debug builds); `pending` is touched only under the queue's lock.
@usableFromInline final class Serializer<Work>: @unchecked Sendable {
    @usableFromInline
    enum Item {
        case work(Work)
        case close
    }

    @usableFromInline let queue = DeliveryQueue()
    /// The items other threads left for the runner, under `queue`'s lock.
    @usableFromInline @exclusivity(unchecked) var pending: [Item] = []
    /// Set by ``cancel()`` from any thread; work not yet run is then dropped.
    @usableFromInline let isCancelled = Atomic<Bool>(false)
    /// Owned by the running thread. Returns `false` to close the serializer after this item. `nil` once
    /// closed, which releases what the handler captured. Noncopyable, so a call borrows the closure where
    /// it lies: a copy would cost a retain and a release of its context, two atomic operations, per item.
    @usableFromInline @exclusivity(unchecked) var handler: SerializerHandler<Work>?
    @usableFromInline @exclusivity(unchecked) var buffer: [Item] = []

    @inlinable
    init(_ handler: @escaping (Work) -> Bool) {
        self.handler = SerializerHandler(handler)
    }

    /// Runs `work` now, or queues it behind the work that is running.
    @inlinable
    func submit(_ work: Work) {
        if queue.tryAcquire() {
            run(work)
            finish()
        } else if queue.enqueue({ pending.append(.work(work)) }) {
            finish()
        }
    }

    /// Runs `work` now on this thread and returns `true`, or returns `false` without queueing it when
    /// another thread (or this one, further up the stack) is running the serializer.
    @inlinable
    func tryRun(_ work: Work) -> Bool {
        guard queue.tryAcquire() else { return false }
        run(work)
        finish()
        return true
    }

    /// Makes this thread the serializer's runner for one item of work done in place (not through the
    /// handler), and returns `true`; or returns `false` when another thread (or this one, further up the
    /// stack) is running the serializer. After `true`, do the work only if ``isOpen``, then call
    /// ``endInPlace(keepOpen:)``. For ``SerializedInput`` (`combineLatest`, `zip`), whose event of a
    /// free serializer runs at once, not wrapped into the queue's type of work. (A closure-taking form
    /// would cost a closure context per item.)
    @inlinable
    func tryBeginInPlace() -> Bool {
        guard queue.tryAcquire() else { return false }
        #if DEBUG
        queue.checkOwned(Serializer.ownershipRule)
        #endif
        return true
    }

    /// Whether the serializer still runs work: neither closed nor cancelled. For its runner only.
    @inlinable
    var isOpen: Bool {
        switch handler {
        case .none: return false
        case .some: return !isCancelled.load(ordering: .acquiring)
        }
    }

    /// Ends an item begun with ``tryBeginInPlace()``: closes the serializer unless `keepOpen`, then runs
    /// the work queued meanwhile and lets go.
    @inlinable
    func endInPlace(keepOpen: Bool) {
        if !keepOpen { handler = nil }
        finish()
    }

    /// Drops the handler after the work already submitted; later submissions are ignored.
    @usableFromInline
    func close() {
        if queue.tryAcquire() {
            handler = nil
            finish()
        } else if queue.enqueue({ pending.append(.close) }) {
            finish()
        }
    }

    /// Drops every item not yet run, at once (even those already queued), and releases the handler.
    @usableFromInline
    func cancel() {
        isCancelled.store(true, ordering: .releasing)
        close()
    }

    @inlinable
    func run(_ work: Work) {
        #if DEBUG
        queue.checkOwned(Serializer.ownershipRule)
        #endif
        if isCancelled.load(ordering: .acquiring) {
            handler = nil
            return
        }
        // The call is alone in its case: with a condition beside it, the optimiser copies the closure.
        let keepOpen: Bool
        switch handler {
        case .none: return
        case .some(let handler): keepOpen = handler.body(work)
        }
        if !keepOpen { self.handler = nil }
    }

    /// What a thread that runs the serializer's work without owning it is told before it stops (debug
    /// builds).
    @usableFromInline
    static var ownershipRule: StaticString {
        "Stillwater engine rule broken: a serializer's handler and buffer are touched only by the thread that won its DeliveryQueue; submit work with submit(_:) instead."
    }

    @inlinable
    func finish() {
        while queue.releaseOrTake({ swap(&pending, &buffer) }) {
            for item in buffer {
                switch item {
                case .work(let work): run(work)
                case .close: handler = nil
                }
            }
            buffer.removeAll(keepingCapacity: true)
        }
    }
}

/// A serializer's handler, called in place (see ``Serializer/handler``).
@usableFromInline
typealias SerializerHandler<Work> = InPlaceClosure<Work, Bool>

/// A stored closure that is called where it lies. Noncopyable, so a call through a `var` that holds it
/// (`switch holder { case .some(let closure): closure.body(input) }`, the call alone in its case) borrows
/// the closure instead of copying it: a copy costs a retain and a release of its context, two atomic
/// operations, per call. The serializer's handler and `catch`'s kept `next` are held this way.
@usableFromInline
struct InPlaceClosure<Input, Output>: ~Copyable {
    @usableFromInline let body: (Input) -> Output

    @inlinable
    init(_ body: @escaping (Input) -> Output) {
        self.body = body
    }
}

/// A weak route to a ``Serializer``, for inner subscriptions that must not keep their node alive.
///
/// Made before its serializer (whose handler captures what uses the route), then pointed at it once with
/// ``target``. The weak reference sits under a lock, so the route is safe to use from any thread.
@usableFromInline
final class WeakSerializer<Work>: Sendable {
    @usableFromInline
    struct Target {
        @usableFromInline weak var serializer: Serializer<Work>?
    }

    @usableFromInline let route = Lock(Target())

    @inlinable init() {}

    /// The serializer the route leads to, while it exists.
    @inlinable
    var target: Serializer<Work>? {
        get { route.withLock { $0.serializer } }
        set { route.withLock { $0.serializer = newValue } }
    }

    /// Submits `work` if the serializer still exists.
    @inlinable
    func submit(_ work: Work) {
        target?.submit(work)
    }
}
