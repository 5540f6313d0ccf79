import Dispatch
@preconcurrency import OpenCombine
import Stillwater
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// W12's view: what a client of a server shows, a version and 100 items.
struct BridgeView: Equatable, Sendable {
    var version = 0
    var items = Array(repeating: 0, count: 100)
}

/// W12's state: the view, and nothing else the consumers read.
struct BridgeState: Sendable {
    var view = BridgeView()
}

/// W12's only action: a new version, which changes one item.
struct Touch: Action {
    func reduce(_ state: inout BridgeState) {
        state.view.version += 1
        state.view.items[state.view.version % 100] &+= 1
    }
}

/// W12 async bridge: a store's view read by 100 tasks, each in a `for await` loop over its own
/// one-slot sequence of views (`values(buffering: .newest(1))` in Stillwater), while the calling
/// thread dispatches `count` actions. Timed from the first dispatch until every consumer has seen the
/// final version (a consumer that lags skips to the newest view). Measured per dispatch. Checksum: the
/// sum of the last versions the consumers saw, which must each be the final one (checked: the run
/// stops otherwise, but for the peer's lost consumers, which are reported; see ``BridgeConsumers``).
/// The note says how many views the consumers took per dispatch: the rest were skipped.
///
/// OpenCombine 0.14 has `Publisher.values` (its `AsyncPublisher`, which asks for one value per `next()`),
/// so its side is `state.map { $0.view }.removeDuplicates().values` over a `CurrentValueSubject` of the
/// state: while a consumer's body runs it asks for nothing, and the subject hands it the newest state
/// when it asks again, so it too skips to the newest view.
func bridgeWorkload(_ scale: Scale) -> Workload {
    let count = scale.count(100_000)
    let consumers = 100
    let peerLost = LostConsumers()
    return Workload(
        name: "W12", title: "async bridge", operation: "dispatch", operations: count, countsAllocations: true,
        contenders: [
            Contender(.stillwater, name: "Stillwater (Store.scope + values(buffering: .newest(1)))") { stopwatch in
                let store = Store(BridgeState())
                let view = store.scope(\.view)
                let readers = BridgeConsumers(.stillwater, count: consumers, final: count) {
                    view.values(buffering: .newest(1))
                }
                return readers.measure(&stopwatch) {
                    for _ in 0..<count { store.dispatch(Touch()) }
                }
            },
            Contender(.openCombine, name: "OpenCombine (CurrentValueSubject + map + removeDuplicates + values)") { stopwatch in
                let state = CurrentValueSubject<BridgeState, Never>(BridgeState())
                let readers = BridgeConsumers(.openCombine, count: consumers, final: count) {
                    state.map { $0.view }.removeDuplicates().values
                }
                return readers.measure(&stopwatch, lostSoFar: peerLost) {
                    for _ in 0..<count {
                        var next = state.value
                        Touch().reduce(&next)
                        state.value = next
                    }
                }
            },
            Contender(.baseline) { stopwatch in
                let store = HandBridgeStore(consumers: consumers)
                let readers = BridgeConsumers(.baseline, count: consumers, final: count) { index in
                    store.mailboxes[index]
                }
                return readers.measure(&stopwatch) {
                    for _ in 0..<count { store.dispatch(Touch()) }
                }
            },
        ]
    )
}

// MARK: - The consumers

/// How many of the peer's consumers never got the final view, over all the runs of one benchmark.
final class LostConsumers: Sendable {
    let count = Atomic<Int>(0)
}

/// W12's consumers: one task each, reading its own sequence of views until it sees the final version.
///
/// Each records the last version it saw. A consumer of Stillwater or of the baseline that does not end
/// on the final version stops the run, naming it. A consumer of the peer that gets no view for a second
/// after the others ended is *lost*: OpenCombine 0.14's `values` over a `CurrentValueSubject` sometimes
/// never hands a consumer the final state (about one run in 40 of the quick size loses one consumer of
/// 100, stuck on an older version). Its task is then cancelled, which ends its loop; the note reports
/// how many were lost, and the checksum counts them as final, so that the peer's flaw does not fail the
/// run (as W7 reports the peer's glitches).
final class BridgeConsumers: Sendable {
    /// What one consumer saw: the last version (-1 before its first), and how many views it took.
    private final class LastSeen: Sendable {
        let version = Atomic<Int>(-1)
        let taken = Atomic<Int>(0)

        /// Records the version of a view taken. Not inlined, so that callgrind counts the views taken
        /// (`Scripts/callgrind-shares.py --per 'LastSeen.*C6record'`).
        @inline(never)
        func record(_ version: Int) {
            self.version.store(version, ordering: .relaxed)
        }
    }

    private let kind: Kind
    private let final: Int
    private let seen: [LastSeen]
    private let tasks: [Task<Void, Never>]
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `count` tasks, consumer `i` looping over `views(i)` until it sees version `final`.
    init<Views: AsyncSequence>(
        _ kind: Kind, count: Int, final: Int, views: @escaping @Sendable (Int) -> Views
    ) where Views.Element == BridgeView, Views.Failure == Never, Views: SendableMetatype, Views.AsyncIterator: SendableMetatype {
        self.kind = kind
        self.final = final
        let seen = (0..<count).map { _ in LastSeen() }
        let started = started, finished = finished
        self.seen = seen
        tasks = seen.indices.map { index in
            let seen = seen[index]
            return Task {
                var taken = 0
                for await view in views(index) {
                    seen.record(view.version)
                    taken += 1
                    if taken == 1 { started.signal() }
                    if view.version == final { break }
                }
                seen.taken.store(taken, ordering: .relaxed)
                finished.signal()
            }
        }
    }

    /// The same, every consumer reading a sequence of its own from `views()`.
    convenience init<Views: AsyncSequence>(
        _ kind: Kind, count: Int, final: Int, views: @escaping @Sendable () -> Views
    ) where Views.Element == BridgeView, Views.Failure == Never, Views: SendableMetatype, Views.AsyncIterator: SendableMetatype {
        self.init(kind, count: count, final: final) { _ in views() }
    }

    /// Times `dispatches` and the consumers' catching up with them, from when every consumer has its
    /// first view until every one has the final view; notes how many views they took (and, with
    /// `lostSoFar`, how many of the peer's consumers were lost), and returns the checksum.
    func measure(_ stopwatch: inout Stopwatch, lostSoFar: LostConsumers? = nil, dispatches: () -> Void) -> Int {
        waitUntilStarted()
        stopwatch.measure {
            dispatches()
            waitUntilFinished()
        }
        stopwatch.note = note(lostSoFar: lostSoFar)
        return checksum
    }

    /// Waits until every consumer has seen its first view (the initial one), so the timed part starts
    /// with all of them subscribed.
    private func waitUntilStarted() {
        for _ in seen where started.wait(timeout: .now() + .seconds(60)) == .timedOut {
            fail("not every consumer got its first view within a minute")
        }
    }

    /// Waits until every consumer's loop has ended, and stops the program unless each ended on the
    /// final version (the peer's lost consumers are cancelled and counted instead).
    private func waitUntilFinished() {
        var running = seen.count
        while running > 0 {
            if finished.wait(timeout: .now() + (kind == .openCombine ? .seconds(1) : .seconds(60))) == .success {
                running -= 1
                continue
            }
            guard kind == .openCombine else { fail("no consumer ended its loop within a minute") }
            for (consumer, task) in zip(seen, tasks) where consumer.version.load(ordering: .relaxed) != final {
                task.cancel()
            }
            for _ in 0..<running where finished.wait(timeout: .now() + .seconds(60)) == .timedOut {
                fail("a cancelled consumer did not end within a minute")
            }
            running = 0
        }
        if kind != .openCombine && lost > 0 { fail("not every consumer ended on the final version") }
    }

    /// How many consumers did not end on the final version.
    private var lost: Int {
        seen.count { $0.version.load(ordering: .relaxed) != final }
    }

    /// The sum of the last versions the consumers saw, a lost consumer of the peer counted as final.
    private var checksum: Int {
        seen.reduce(0) { $0 &+ (kind == .openCombine ? final : $1.version.load(ordering: .relaxed)) }
    }

    /// How many views the consumers took per dispatch, of the one per consumer that each dispatch
    /// makes (the initial views not counted): the rest were replaced by a newer one before being taken.
    /// Then, if any, how many of the peer's consumers were lost in all its runs so far (`lostSoFar`,
    /// which this run's are added to).
    private func note(lostSoFar: LostConsumers?) -> String {
        let taken = seen.reduce(0) { $0 + $1.taken.load(ordering: .relaxed) } - seen.count
        let views = "views taken: \(number(Double(taken) / Double(Swift.max(final, 1)))) per dispatch of \(seen.count)"
        guard let lostSoFar else { return views }
        let lost = lostSoFar.count.add(lost, ordering: .relaxed).newValue
        return lost == 0 ? views : views + ", lost: \(lost) consumers in all runs never got the final view"
    }

    /// Stops the run, naming the consumers that did not end on the final version.
    private func fail(_ problem: String) -> Never {
        printError("W12 \(kind.defaultName): \(problem); \(lost) of \(seen.count) consumers are not on the final version \(final)")
        for index in seen.indices.filter({ seen[$0].version.load(ordering: .relaxed) != final }).prefix(10) {
            printError("  consumer \(index) last saw version \(seen[index].version.load(ordering: .relaxed))")
        }
        exit(1)
    }
}

// MARK: - The hand-written baseline

/// W12 by hand: a class holding the state, reduced in place, which hands each new view to every
/// consumer's one-slot mailbox. The least a bridge to async loops costs: one lock, one slot and, for a
/// consumer that waits, one continuation per view it takes.
private final class HandBridgeStore: Sendable {
    let mailboxes: [HandMailbox]
    private let state = Mutex(BridgeState())

    /// Creates the store with `consumers` mailboxes, each holding the initial view.
    init(consumers: Int) {
        let initial = BridgeState().view
        mailboxes = (0..<consumers).map { _ in HandMailbox(initial) }
    }

    func dispatch(_ action: Touch) {
        let view = state.withLock { state in
            let old = state.view
            action.reduce(&state)
            return old == state.view ? nil : state.view
        }
        guard let view else { return }
        for mailbox in mailboxes { mailbox.put(view) }
    }
}

/// One consumer's slot: the newest view not yet taken, or the consumer waiting for one.
///
/// The waiting consumer's continuation is an `UnsafeContinuation`, whose layout the compiler knows, so
/// the slot is read in place; a `CheckedContinuation` (whose layout the Concurrency library keeps to
/// itself) in the slot made every `put` test and copy it through runtime calls, which a floor should
/// not pay. Each `next()` takes the view, or waits, inside the continuation's closure: the slot's lock
/// makes sure it is resumed exactly once.
private final class HandMailbox: AsyncSequence, AsyncIteratorProtocol, Sendable {
    typealias Element = BridgeView
    typealias Failure = Never

    private struct Slot {
        var view: BridgeView?
        var waiter: UnsafeContinuation<BridgeView, Never>?
    }

    private let slot: Mutex<Slot>

    init(_ initial: BridgeView) {
        slot = Mutex(Slot(view: initial))
    }

    /// Replaces the view not yet taken, or hands it to the waiting consumer.
    func put(_ view: BridgeView) {
        let waiter = slot.withLock { slot -> UnsafeContinuation<BridgeView, Never>? in
            guard let waiter = slot.waiter else {
                slot.view = view
                return nil
            }
            slot.waiter = nil
            return waiter
        }
        waiter?.resume(returning: view)
    }

    func makeAsyncIterator() -> HandMailbox { self }

    /// The newest view not yet taken, waiting for one if there is none. Never ends.
    func next() async -> BridgeView? {
        await withUnsafeContinuation { continuation in
            let ready = slot.withLock { slot -> BridgeView? in
                if let view = slot.view {
                    slot.view = nil
                    return view
                }
                slot.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
