import Stillwater

/// Wakes a test store's `receive` or `finish` when something it waits for may have happened: the store
/// reduced an action, one of its effects ended, or an effect's task handed the test store a job to run.
///
/// A waiter calls ``look()``, looks at the store, and, finding nothing yet, suspends with
/// ``wait(after:until:)``: it resumes at the first ``signal()`` after what it read (at once if one came
/// in between), or at its deadline, through one sleeping task that a signal cancels. No loop and no
/// polling: a wait that nothing wakes costs no CPU until its deadline, and each wake-up has a cause.
///
/// One state under one lock: the count of signals, the one waiter (a continuation, its number and its
/// timer), and how many times waiters looked and were woken (``looks``, ``wakeUps``: tests count them).
final class ActivitySignal: Sendable {
    private struct Waiter {
        var continuation: CheckedContinuation<Void, Never>
        var number: UInt64
        var timer: Task<Void, Never>?
    }

    private struct State {
        var generation: UInt64 = 0
        var waiter: Waiter?
        var waits: UInt64 = 0
        var wakeUps = 0
        var timeOuts = 0
        var looks = 0
    }

    private let state = Lock(State())

    /// Called by a waiter each time it is about to look at the store: returns how many signals came so
    /// far, to wait after, and counts the look.
    func look() -> UInt64 {
        state.withLock { state in
            state.looks += 1
            return state.generation
        }
    }

    /// How many times waiters looked at the store (``look()``): a waiter that polled would look at it
    /// hundreds of times a second, one that is woken only by causes a few times in all.
    var looks: Int {
        state.withLock { $0.looks }
    }

    /// How many times a wait that suspended was resumed, by a signal or by its deadline.
    var wakeUps: Int {
        state.withLock { $0.wakeUps }
    }

    /// How many of those wake-ups were deadlines.
    var timeOuts: Int {
        state.withLock { $0.timeOuts }
    }

    /// Something happened: resumes the waiter, if one is suspended, and stops its timer.
    func signal() {
        let waiter: Waiter? = state.withLock { state in
            state.generation &+= 1
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.wakeUps += 1
            return waiter
        }
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume()
    }

    /// Suspends the calling task until a signal after `seen` (what ``look()`` returned before looking at
    /// the store), or until `deadline`; returns at once when a signal came after `seen` already.
    ///
    /// One task waits at a time (a test store's `receive` and `finish` run on the test's task).
    func wait(after seen: UInt64, until deadline: ContinuousClock.Instant) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let number: UInt64? = state.withLock { state in
                guard state.generation == seen else { return nil }
                state.waits &+= 1
                state.waiter = Waiter(continuation: continuation, number: state.waits, timer: nil)
                return state.waits
            }
            guard let number else {
                continuation.resume()
                return
            }
            // The deadline: one sleep, cancelled by the signal that comes first.
            let timer = Task.detached { [self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                timeOut(number)
            }
            let woken: Bool = state.withLock { state in
                guard state.waiter?.number == number else { return true }
                state.waiter?.timer = timer
                return false
            }
            if woken { timer.cancel() }
        }
    }

    /// The deadline of wait `number` passed: resumes it, unless a signal did already.
    private func timeOut(_ number: UInt64) {
        let waiter: Waiter? = state.withLock { state in
            guard let waiter = state.waiter, waiter.number == number else { return nil }
            state.waiter = nil
            state.wakeUps += 1
            state.timeOuts += 1
            return waiter
        }
        waiter?.continuation.resume()
    }
}
