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
}
