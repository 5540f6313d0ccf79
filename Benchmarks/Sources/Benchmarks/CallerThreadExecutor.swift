import Dispatch
import Synchronization

/// A task executor whose jobs run on the thread that calls ``run(_:)``, one after another, in the order
/// they were enqueued.
///
/// W14 needs async code (a `LiveConnection`'s `nextBatch()`, awaited by a write loop per connection as an
/// adapter awaits it) in a timed part that callgrind counts. Callgrind switches collection on and off per
/// thread (`Stopwatch.measure` toggles the calling thread's), and on the global concurrent executor a task
/// moves between threads at every `await`. Tasks that prefer this executor (`Task(executorPreference:)`)
/// stay on the calling thread instead, so the gate counts their work, in an order that does not depend
/// on the machine. Work the library starts in unstructured tasks of its own (the hub's writer, the check
/// of a client's credentials) still runs on the global executor: a preference is not inherited by them.
///
/// Between two calls of ``run(_:)`` nothing runs: jobs enqueued meanwhile wait for the next call. A
/// run in which no job comes for ``stallLimit`` stops the program with the workload's name, rather than
/// hang a CI run (a task waits for something that never comes: a frame the library did not send).
final class CallerThreadExecutor: TaskExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        /// Whether ``run(_:)`` sleeps until a job or the end is signalled.
        var sleeping = false
        /// Whether the task of the current ``run(_:)`` returned.
        var finished = false
    }

    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    /// Who runs here, for the message of a stall.
    let name: String
    /// How long a run may wait without a job.
    let stallLimit: Duration

    init(name: String, stallLimit: Duration = .seconds(300)) {
        self.name = name
        self.stallLimit = stallLimit
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wakes = queue.withLock { queue -> Bool in
            queue.jobs.append(job)
            defer { queue.sleeping = false }
            return queue.sleeping
        }
        if wakes { wake.signal() }
    }

    /// Runs `body` in a task that prefers this executor, and every job enqueued here, on the calling
    /// thread until `body` returned; returns what it returned.
    ///
    /// Call it from synchronous code that is not on an actor the jobs need (W14's run is not).
    func run<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
        let result = ResultSlot<Value>()
        Task(executorPreference: self) {
            result.value = await body()
            let wakes = self.queue.withLock { queue -> Bool in
                queue.finished = true
                defer { queue.sleeping = false }
                return queue.sleeping
            }
            if wakes { self.wake.signal() }
        }
        var batch: [UnownedJob] = []
        while true {
            let finished = queue.withLock { queue -> Bool in
                swap(&queue.jobs, &batch)
                if batch.isEmpty && !queue.finished { queue.sleeping = true }
                return queue.finished
            }
            if batch.isEmpty {
                if finished { break }
                let limit = stallLimit.components
                let nanoseconds = limit.seconds * 1_000_000_000 + limit.attoseconds / 1_000_000_000
                if wake.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .timedOut {
                    fatalError("\(name): nothing to run for \(stallLimit); a task waits for what never came")
                }
                continue
            }
            // Every job taken is run, even when the task ended meanwhile: it left the queue.
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            batch.removeAll(keepingCapacity: true)
        }
        queue.withLock { $0.finished = false }
        return result.value!
    }
}

/// The value a task of ``CallerThreadExecutor/run(_:)`` returned: written by that task and read after it
/// ended, both on the calling thread.
private final class ResultSlot<Value>: @unchecked Sendable {
    var value: Value?
}
