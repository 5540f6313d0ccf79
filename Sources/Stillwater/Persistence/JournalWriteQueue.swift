/// What a ``FileJournal``'s writer thread does next: the state machine half of `JournalWriter` (STYLE
/// habit 6). Pure: it holds no lock, makes no system call and calls nothing it is given; each method
/// changes the state and returns what the caller (holding the lock) must do once it lets go of it.
///
/// Requests run in the order they were submitted. Appends waiting next to each other are taken together
/// (group commit): one write and one flush for all of them. A failure stops the queue: requests that
/// write are refused from then on, those that only read or reopen still run, until ``reopened()``.
///
/// Generic in what an append and a job carry, so that tests can drive it with plain values.
struct JournalWriteQueue<Append, Job> {
    /// A request for the writer thread.
    enum Request {
        /// Records to frame, write and flush (none: a flush of what was appended through `sync()`).
        case append(Append)
        /// Work that runs alone on the writer thread. `runsWhenStopped`: a read or a reopen, which still
        /// runs after a failure; a write (a snapshot) is refused then.
        case job(Job, runsWhenStopped: Bool)

        var runsWhenStopped: Bool {
            if case .job(_, true) = self { true } else { false }
        }
    }

    /// What `submit` decided.
    enum Submitted {
        /// Queued; `wake`: the writer thread sleeps and must be woken (once) after the lock is let go.
        case queued(wake: Bool)
        /// Refused with this error (the journal stopped); nothing was queued.
        case refused(JournalError)
    }

    /// What the writer thread does next.
    enum Next {
        /// Frame, write and flush these appends in one batch, in this order.
        case commit([Append])
        /// Run this job.
        case run(Job)
        /// Nothing to do: wait to be woken.
        case sleep
        /// The journal was closed and nothing is left: end the thread.
        case exit
    }

    /// The requests not yet taken, oldest first.
    private var requests: [Request] = []
    /// Set by a failed write or flush: what every write is refused with until ``reopened()``.
    private(set) var stop: JournalError?
    /// Whether the writer thread went to sleep (or is about to) and needs a wake-up to see new work.
    private var sleeping = false
    /// Whether the journal was closed: the thread ends once the requests are done.
    private var closing = false

    /// How many requests wait (for tests).
    var waiting: Int { requests.count }

    /// Queues `request`, or refuses it when the journal stopped and the request writes.
    mutating func submit(_ request: Request) -> Submitted {
        if let stop, !request.runsWhenStopped { return .refused(stop) }
        requests.append(request)
        return .queued(wake: wakeIfSleeping())
    }

    /// Takes the next work: a job at the head alone, or every append from the head up to the next job.
    mutating func next() -> Next {
        guard let first = requests.first else {
            if closing { return .exit }
            sleeping = true
            return .sleep
        }
        if case .job(let job, _) = first {
            requests.removeFirst()
            return .run(job)
        }
        let count = requests.prefix { if case .append = $0 { true } else { false } }.count
        let appends = requests.prefix(count).compactMap { request -> Append? in
            if case .append(let append) = request { append } else { nil }
        }
        requests.removeFirst(count)
        return .commit(appends)
    }

    /// Stops the queue after a failed write or flush: `error` (a ``JournalError/Kind/stopped`` naming
    /// the failure) is what later writes are refused with. Returns the queued requests that write,
    /// removed, for the caller to refuse with it; reads and reopens stay queued.
    mutating func failed(_ error: JournalError) -> [Request] {
        if stop == nil { stop = error }
        let refused = requests.filter { !$0.runsWhenStopped }
        requests.removeAll { !$0.runsWhenStopped }
        return refused
    }

    /// Clears the stop: a reopen checked the files and the journal writes again.
    mutating func reopened() {
        stop = nil
    }

    /// Marks the journal closed; returns whether the writer thread must be woken to end.
    mutating func close() -> Bool {
        closing = true
        return wakeIfSleeping()
    }

    /// Whether the writer was asleep (it is counted awake from here on, so it is woken once).
    private mutating func wakeIfSleeping() -> Bool {
        defer { sleeping = false }
        return sleeping
    }
}

extension JournalWriteQueue: Sendable where Append: Sendable, Job: Sendable {}
extension JournalWriteQueue.Request: Sendable where Append: Sendable, Job: Sendable {}
extension JournalWriteQueue.Next: Equatable where Append: Equatable, Job: Equatable {}
extension JournalWriteQueue.Submitted: Equatable {}
