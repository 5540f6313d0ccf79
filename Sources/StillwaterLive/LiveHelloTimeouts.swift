/// The hello time limits of a hub's connections, kept by one task for all of them instead of a sleeping
/// task per connection.
///
/// A sleeping task cancelled when its client says hello keeps its task and a timer until its deadline,
/// and then wakes a thread: a connection per second costs a wake-up per second, ``LiveOptions/helloTimeout``
/// later, and every connection made in the last timeout holds a task. Here a connection is one entry
/// (its deadline and a weak reference) in a queue ordered by deadline (every connection of a hub has the
/// same limit, so the order of arrival is the order of the deadlines); one task sleeps until the first
/// deadline, times out every connection whose deadline passed (a connection past its hello ignores it:
/// ``LiveSession/helloTimedOut()``), and sleeps again, or ends when the queue is empty. The task wakes up
/// to `slack` after a deadline, so that the connections made within one `slack` share a wake-up.
final class LiveHelloTimeouts<Service: LiveService>: Sendable {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        weak var connection: LiveConnection<Service>?
    }

    private struct State {
        /// The entries from `head` on wait; those before it were handled (dropped now and then).
        var entries: [Entry] = []
        var head = 0
        /// Whether the task that times connections out runs.
        var running = false
    }

    private let state = LiveLock(State())
    private let timeout: Duration
    private let slack: Duration

    /// Time limits of `timeout` from each connection's arrival, checked up to a twentieth of it (at most
    /// half a second) late.
    init(timeout: Duration) {
        self.timeout = timeout
        slack = min(timeout / 20, .milliseconds(500))
    }

    /// Times `connection` out ``LiveOptions/helloTimeout`` from now, unless it is past its hello by then.
    func add(_ connection: LiveConnection<Service>) {
        let deadline = ContinuousClock.now + timeout
        let start = state.withLock { state -> Bool in
            state.entries.append(Entry(deadline: deadline, connection: connection))
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if start { Task { await self.run() } }
    }

    /// Times out the connections whose deadline passed, then sleeps until the next deadline; ends when
    /// none waits. Not cancellable: it ends on its own within one time limit of the last connection.
    private func run() async {
        while true {
            let now = ContinuousClock.now
            let (due, next) = state.withLock { state -> ([LiveConnection<Service>], ContinuousClock.Instant?) in
                var due: [LiveConnection<Service>] = []
                while state.head < state.entries.count, state.entries[state.head].deadline <= now {
                    if let connection = state.entries[state.head].connection { due.append(connection) }
                    state.head += 1
                }
                guard state.head < state.entries.count else {
                    state.entries = []
                    state.head = 0
                    state.running = false
                    return (due, nil)
                }
                // Handled entries are dropped once they are most of the array (amortised O(1) each).
                if state.head >= 64 && state.head * 2 >= state.entries.count {
                    state.entries.removeFirst(state.head)
                    state.head = 0
                }
                return (due, state.entries[state.head].deadline)
            }
            for connection in due { connection.helloTimedOut() }
            guard let next else { return }
            try? await Task.sleep(until: next + slack, clock: .continuous)
        }
    }
}
