import Dispatch
import Foundation
import Synchronization

/// The thread a ``FileJournal`` writes on, and what its callers share with that thread under one lock:
/// the storage half of `JournalWriteQueue` (STYLE habit 6), which decides; this holds the lock, does the
/// file work and answers the callers.
///
/// Every file operation of the journal after `init` runs on this thread: appends, flushes, snapshots,
/// loads and reads. Callers queue a request and wait for its answer, an async caller suspended (no
/// thread of Swift's cooperative pool is held), a synchronous one blocked. The lock is never held during
/// a system call, so callers queue while a write and its flush run, and the appends that queued meanwhile
/// are written and flushed together next (group commit).
///
/// The files the thread appends to (`FileJournalState`: the open segment, the lists of segments and
/// snapshots) are a local variable of the thread, touched by no other.
final class JournalWriter: Sendable {
    /// An answer to a caller: called once, on the writer thread, never under the lock.
    typealias Reply<Value> = @Sendable (Result<Value, JournalError>) -> Void

    /// An append request: the encoded payloads of its records (none for a `sync()`) and its answer, the
    /// versions the records were given (empty when there were none).
    struct Append: Sendable {
        var payloads: [Data]
        var reply: Reply<Range<Int>>
    }

    /// Work that runs alone on the writer thread, with the thread's files.
    struct Job: Sendable {
        /// Does the work and answers its caller.
        var run: @Sendable (_ files: inout FileJournalState, _ writer: JournalWriter) -> Void
        /// Answers the caller with `error` when the job is refused (the journal stopped).
        var refuse: @Sendable (_ error: JournalError) -> Void
    }

    /// What the callers and the writer thread share.
    struct Shared: Sendable {
        var queue = JournalWriteQueue<Append, Job>()
        /// Whether a `load()` succeeded since the last one that threw: nothing may be appended before.
        var loaded = false
        /// The last version appended (durable or not).
        var appendedVersion = 0
        /// The last version written and flushed.
        var durableVersion = 0
        /// Records appended through the synchronous `append(_:version:)` since the last flush, framed.
        var pending: [UInt8] = []
    }

    /// Records framed for one write, and who waits for them.
    struct Batch {
        /// The records, framed, without the commit mark.
        var bytes: [UInt8]
        /// The version of the last record in `bytes`.
        var lastVersion: Int
        /// Each append of the batch with its versions.
        var answers: [(reply: Reply<Range<Int>>, versions: Range<Int>)] = []
    }

    /// The name of the writer thread (as `Thread.current.name` reads it there).
    static let threadName = "Stillwater.FileJournal writer"

    /// The directory and its file operations.
    let files: JournalDirectory
    let shared = Lock(Shared())
    /// Signalled once for each time the queue said the sleeping thread must be woken.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled by the thread as it ends.
    private let ended = DispatchSemaphore(value: 0)
    /// The writer thread's `pthread_self()`, once it runs (tests compare it with the thread of each write).
    let thread = Atomic<UInt>(0)

    /// Starts the writer thread for the journal in `files`.
    init(files: JournalDirectory) {
        self.files = files
        // The thread holds the writer (not the journal) until it ends; `close()` ends it.
        let thread = Thread { [self] in run() }
        thread.name = Self.threadName
        // As much as a main thread has: `load()` decodes the user's types here, however deeply nested.
        thread.stackSize = 8 << 20
        thread.start()
    }

    // MARK: Callers

    /// Queues `request`; returns the error it is refused with (the journal stopped), or `nil`.
    func submit(_ request: JournalWriteQueue<Append, Job>.Request) -> JournalError? {
        let submitted = shared.withLock { $0.queue.submit(request) }
        switch submitted {
        case .queued(let wakeWriter):
            if wakeWriter { wake.signal() }
            return nil
        case .refused(let error):
            return error
        }
    }

    /// Queues `job` and blocks the calling thread until it answered; returns its answer.
    func perform<Value: Sendable>(
        runsWhenStopped: Bool, _ work: @escaping @Sendable (inout FileJournalState, JournalWriter, Reply<Value>) -> Void
    ) throws(JournalError) -> Value {
        let answer = BlockingAnswer<Value>()
        submitJob(runsWhenStopped: runsWhenStopped, reply: answer.give, work)
        return try answer.wait()
    }

    /// Queues `job` and suspends the calling task (holding no thread) until it answered.
    func perform<Value: Sendable>(
        runsWhenStopped: Bool, _ work: @escaping @Sendable (inout FileJournalState, JournalWriter, Reply<Value>) -> Void
    ) async throws(JournalError) -> Value {
        try await withCheckedContinuation { continuation in
            submitJob(runsWhenStopped: runsWhenStopped, reply: { continuation.resume(returning: $0) }, work)
        }.get()
    }

    /// Queues an append of `payloads` and blocks until they are durable; see ``Append``.
    func append(_ payloads: [Data]) throws(JournalError) -> Range<Int> {
        let answer = BlockingAnswer<Range<Int>>()
        if let refused = submit(.append(Append(payloads: payloads, reply: answer.give))) { throw refused }
        return try answer.wait()
    }

    /// Queues an append of `payloads` and suspends until they are durable; see ``Append``.
    func append(_ payloads: [Data]) async throws(JournalError) -> Range<Int> {
        try await withCheckedContinuation { continuation in
            if let refused = submit(.append(Append(payloads: payloads, reply: { continuation.resume(returning: $0) }))) {
                continuation.resume(returning: .failure(refused))
            }
        }.get()
    }

    private func submitJob<Value: Sendable>(
        runsWhenStopped: Bool, reply: @escaping Reply<Value>,
        _ work: @escaping @Sendable (inout FileJournalState, JournalWriter, Reply<Value>) -> Void
    ) {
        let job = Job(run: { files, writer in work(&files, writer, reply) }, refuse: { reply(.failure($0)) })
        if let refused = submit(.job(job, runsWhenStopped: runsWhenStopped)) { reply(.failure(refused)) }
    }

    /// Ends the writer thread once the queued work is done, and waits for it to end.
    func close() {
        if shared.withLock({ $0.queue.close() }) { wake.signal() }
        ended.wait()
    }

    // MARK: The writer thread

    /// What the thread took from the queue, under the lock.
    private enum Step {
        case commit(Batch)
        case run(Job)
        case sleep
        case exit
    }

    /// The thread's loop: take work, do it outside the lock, answer.
    private func run() {
        thread.store(currentThread(), ordering: .relaxed)
        var state = FileJournalState()
        while true {
            let step = shared.withLock { shared -> Step in
                switch shared.queue.next() {
                case .commit(let appends): .commit(Self.frame(appends, &shared))
                case .run(let job): .run(job)
                case .sleep: .sleep
                case .exit: .exit
                }
            }
            switch step {
            case .commit(let batch):
                let result = Result { () throws(JournalError) in try write(batch, &state) }
                for (reply, versions) in batch.answers { reply(result.map { versions }) }
            case .run(let job):
                job.run(&state, self)
            case .sleep:
                wake.wait()
            case .exit:
                ended.signal()
                return
            }
        }
    }

    /// Frames `appends` after the records pending from `append(_:version:)`, giving each its versions in
    /// order, and takes them all out of `shared` as one batch.
    private static func frame(_ appends: [Append], _ shared: inout Shared) -> Batch {
        var answers: [(reply: Reply<Range<Int>>, versions: Range<Int>)] = []
        for append in appends {
            let first = shared.appendedVersion + 1
            for payload in append.payloads {
                shared.appendedVersion += 1
                JournalFormat.appendRecord(version: shared.appendedVersion, payload: payload, to: &shared.pending)
            }
            answers.append((append.reply, first..<(shared.appendedVersion + 1)))
        }
        return Batch(bytes: takePending(&shared), lastVersion: shared.appendedVersion, answers: answers)
    }

    /// The pending records, taken out of `shared`.
    private static func takePending(_ shared: inout Shared) -> [UInt8] {
        defer { shared.pending.removeAll(keepingCapacity: shared.pending.capacity <= 1 << 20) }
        return shared.pending
    }

    /// Takes the records pending from `append(_:version:)` as a batch (for a snapshot, which writes them
    /// first).
    func takePending() -> Batch {
        shared.withLock { shared in
            Batch(bytes: Self.takePending(&shared), lastVersion: shared.appendedVersion)
        }
    }

    /// Writes `batch` and its commit mark at the end of the segment and flushes it; then it is durable.
    /// On failure the journal stops (see ``stopped(by:)``) and the error is rethrown. Writer thread only.
    func write(_ batch: Batch, _ state: inout FileJournalState) throws(JournalError) {
        guard !batch.bytes.isEmpty, let segment = state.segment else { return }
        var bytes = batch.bytes
        let chain = JournalFormat.appendCommitMark(after: segment.chain, lastVersion: batch.lastVersion, to: &bytes)
        try stopping { () throws(JournalError) in
            try segment.file.write(bytes, at: segment.length)
            try segment.file.sync()
        }
        state.segment?.length += bytes.count
        state.segment?.chain = chain
        shared.withLock { $0.durableVersion = max($0.durableVersion, batch.lastVersion) }
    }

    /// Runs `body`, a step that writes; when it throws, stops the journal (see ``stopped(by:)``) and
    /// rethrows. Writer thread only.
    func stopping(_ body: () throws(JournalError) -> Void) throws(JournalError) {
        do {
            try body()
        } catch {
            stopped(by: error)
            throw error
        }
    }

    /// Stops the journal after `error`, a failed write or flush: every write queued or to come is refused
    /// with a ``JournalError/Kind/stopped`` naming it, until a reopen.
    func stopped(by error: JournalError) {
        let stop = JournalError(
            .stopped, path: error.path, offset: error.offset,
            reason: "the journal stopped writing after a failed write or flush (\(error.reason)); reopen it with load() or open() before writing again")
        let refused = shared.withLock { $0.queue.failed(stop) }
        for request in refused {
            switch request {
            case .append(let append): append.reply(.failure(stop))
            case .job(let job, _): job.refuse(stop)
            }
        }
    }
}

/// An answer a synchronous caller blocks for: given once by the writer thread.
private final class BlockingAnswer<Value: Sendable>: Sendable {
    private let answer = Lock<Result<Value, JournalError>?>(nil)
    private let given = DispatchSemaphore(value: 0)

    /// Stores `result` and wakes the waiting caller.
    @Sendable func give(_ result: Result<Value, JournalError>) {
        answer.withLock { $0 = result }
        given.signal()
    }

    /// Blocks until the answer was given; returns or throws it.
    func wait() throws(JournalError) -> Value {
        given.wait()
        // `give` stored the answer before it signalled.
        guard let result = answer.withLock({ $0 }) else { preconditionFailure("FileJournal: an answer was signalled before it was given") }
        return try result.get()
    }
}
