import Foundation
import Testing
@testable import Stillwater
@testable import StillwaterTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `send` whose action is queued behind another thread's work waits to be told it was reduced: the
/// thread sleeps, it does not poll.
@Suite("TestStore: waiting for a queued action")
struct TestStoreWaitTests {
    /// The calling thread's CPU time so far, and how many times it was switched out (woken again).
    private static func threadUsage() -> (cpu: Duration, switches: Int) {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        let cpu = Duration.seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
        #if canImport(Glibc)
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)    // RUSAGE_THREAD
        return (cpu, usage.ru_nvcsw + usage.ru_nivcsw)
        #else
        return (cpu, 0)
        #endif
    }

    /// Runs `body` after `delay` on a thread of its own: Dispatch's global queue may be kept busy by other
    /// tests' blocked work (seen under the thread sanitizer), a thread of its own is not.
    private static func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            body()
        }
    }

    /// The blocking wait, from a synchronous context.
    private static func block(on signal: ReducedSignal, for patience: Duration) -> Bool {
        signal.wait(for: patience)
    }

    /// A test store whose deliverer another thread holds inside `.slow` until `release` is signalled.
    private static func heldStore() -> (TestStore<Int, RaceAction>, release: DispatchSemaphore) {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let gate = Middleware<Int> { _, action, next in
            if let action = action as? RaceAction, action == .slow {
                entered.signal()
                release.wait()
            }
            next(action)
        }
        let store = TestStore<Int, RaceAction>(initialState: 0, middleware: [gate])
        store.exhaustivity = .off
        let raw = store.store
        DispatchQueue.global().async { raw.dispatch(RaceAction.slow) }
        entered.wait()
        return (store, release)
    }

    @Test("a synchronous send queued behind another thread's action sleeps until it is reduced: no CPU, a few wake-ups")
    func synchronousSendSleeps() {
        let (store, release) = Self.heldStore()
        let hold = Duration.milliseconds(400)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(400)) { release.signal() }
        let start = ContinuousClock.now
        let before = Self.threadUsage()
        store.send(.fast) { $0 = 11 }
        let after = Self.threadUsage()
        let waited = ContinuousClock.now - start
        #expect(waited >= hold - .milliseconds(50), "send returned before the action's turn")
        // A loop that polls (a yield, a short sleep) would spend its CPU time or its wake-ups here.
        #expect(after.cpu - before.cpu < .milliseconds(20), "CPU while waiting: \(after.cpu - before.cpu)")
        #expect(after.switches - before.switches < 50, "wake-ups while waiting: \(after.switches - before.switches)")
        #expect(store.state == 11)
    }

    @Test("an async send queued behind another thread's action is resumed when it is reduced")
    func asynchronousSendIsResumed() async {
        let (store, release) = Self.heldStore()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { release.signal() }
        await store.send(.fast) { $0 = 11 }
        #expect(store.state == 11)
    }

    @Test("the signal wakes a waiter once, whichever comes first; a wait that runs out says so")
    func signalStates() async {
        let early = ReducedSignal()
        early.signal()
        #expect(Self.block(on: early, for: .milliseconds(1)))
        #expect(await early.wait(for: .milliseconds(1)))

        let late = ReducedSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { late.signal() }
        #expect(await late.wait(for: .seconds(5)))

        let never = ReducedSignal()
        #expect(await never.wait(for: .milliseconds(20)) == false)
        #expect(Self.block(on: never, for: .milliseconds(20)) == false)
        never.signal()      // after the end: nothing to resume, and no trap
    }

    @Test("receive waiting for an action an effect sends once a gate opens 300 ms later is woken by its arrival, not by a clock: a few wake-ups")
    func receiveIsWoken() async {
        let store = TestStore(initialState: 0, actions: LateAction.self)
        let gate = Gate()
        await store.send(.start(gate)) { $0 = 1 }
        let start = ContinuousClock.now
        Self.after(.milliseconds(300)) { gate.open() }
        await store.receive(.done, timeout: .seconds(10)) { $0 = 2 }
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(250), "received before the effect sent: \(waited)")
        // A loop that polls every millisecond would wake about 300 times; each wake-up here has a cause
        // (the task's job handed back once the gate opened, the action reduced, the effect's end).
        #expect(store.activity.wakeUps <= 5, "wake-ups while waiting: \(store.activity.wakeUps)")
        #expect(store.activity.looks <= 8, "looks at the store while waiting: \(store.activity.looks)")
        await store.finish()
    }

    @Test("finish waiting for an effect that ends once a gate opens 300 ms later, sending nothing, is woken by its end: a few wake-ups")
    func finishIsWoken() async {
        let store = TestStore(initialState: 0, actions: LateAction.self)
        let gate = Gate()
        await store.send(.quiet(gate))
        #expect(store.store.runningEffectCount == 1)
        let start = ContinuousClock.now
        Self.after(.milliseconds(300)) { gate.open() }
        await store.finish(timeout: .seconds(10))
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(250), "finish returned before the effect ended: \(waited)")
        #expect(store.store.runningEffectCount == 0)
        #expect(store.activity.wakeUps <= 5, "wake-ups while waiting: \(store.activity.wakeUps)")
        #expect(store.activity.looks <= 8, "looks at the store while waiting: \(store.activity.looks)")
    }

    @Test("a receive that nothing answers sleeps until its timeout: one wake-up, and the failure")
    func receiveTimesOutWithoutPolling() async {
        let store = TestStore(initialState: 0, actions: LateAction.self)
        let start = ContinuousClock.now
        await withKnownIssue {
            await store.receive(.done, timeout: .milliseconds(200))
        }
        #expect(ContinuousClock.now - start >= .milliseconds(200))
        #expect(store.activity.wakeUps <= 2, "wake-ups while waiting: \(store.activity.wakeUps)")
        #expect(store.activity.timeOuts >= 1)
        #expect(store.activity.looks <= 3, "looks at the store while waiting: \(store.activity.looks)")
    }

    @Test("the activity signal resumes a wait once, by a signal or by its deadline, and a signal before the wait is not lost")
    func activitySignal() async {
        let signal = ActivitySignal()
        let seen = signal.look()
        signal.signal()
        await signal.wait(after: seen, until: .now + .seconds(60))    // returns at once: a signal came
        #expect(signal.wakeUps == 0)

        let late = signal.look()
        Self.after(.milliseconds(50)) { signal.signal() }
        await signal.wait(after: late, until: .now + .seconds(60))
        #expect(signal.wakeUps == 1)
        #expect(signal.timeOuts == 0, "woken by the deadline, not by the signal")

        let quiet = signal.look()
        await signal.wait(after: quiet, until: .now + .milliseconds(20))
        #expect(signal.wakeUps == 2)
        #expect(signal.timeOuts == 1)
        signal.signal()     // nobody waits: counted, wakes nobody
        #expect(signal.wakeUps == 2)
    }
}

/// What an effect waits for outside the test store's reach: a stream that ends when the gate opens.
final class Gate: Sendable, Equatable {
    let opened: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (opened, continuation) = AsyncStream.makeStream()
    }

    func open() { continuation.finish() }

    static func == (lhs: Gate, rhs: Gate) -> Bool { lhs === rhs }
}

/// Actions whose effects wait for something outside the test store (a ``Gate``), which it cannot run for
/// them.
enum LateAction: EffectAction, Equatable, Sendable {
    case start(Gate), done, quiet(Gate)

    func reduce(into state: inout Int) -> Effect<LateAction> {
        switch self {
        case .start(let gate):
            state = 1
            return .run { send, _ in
                for await _ in gate.opened {}
                send(.done)
            }
        case .done:
            state = 2
            return .none
        case .quiet(let gate):
            return .run { _, _ in
                for await _ in gate.opened {}
            }
        }
    }
}
