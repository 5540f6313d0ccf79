import Stillwater

/// A command waiting for the hub's writer.
struct LiveSubmission<Service: LiveService>: Sendable {
    var command: Service.Command
    var cid: String?
    var identity: Service.Identity
    var reply: @Sendable (LiveOutcome) -> Void
}

/// The hub's writer and reader of its log: takes the submitted commands in batches, records the accepted
/// ones with one append per batch, and applies the log's records in order, its own and (for a replica of
/// a shared log) everyone else's.
///
/// One run loop at a time uses it (``LiveHubShared`` starts it and says when to stop), so the state
/// below changes only between that loop's awaits. The service's code (``LiveService/decide(_:state:identity:)``,
/// `reduce`, ``LiveService/view(of:)``) runs here, on the actor, never under a lock.
actor LiveWorker<Service: LiveService> {
    typealias Log = any ActionLog<LiveLogState<Service.State>, LiveEntry<Service.LiveAction>>

    /// A sender waiting for the record at some version to be applied.
    private struct Waiter {
        var reply: @Sendable (LiveOutcome) -> Void
        /// The sender's command repeated a `cid` of an earlier command in the same batch: told
        /// `duplicate` with that command's version.
        var repeatsEarlier: Bool
    }

    /// What a batch does with one submission.
    private enum Plan {
        /// Answered without the log (refused, or a `cid` remembered already).
        case answer(LiveOutcome)
        /// Recorded as the batch's entry at this index.
        case entry(Int)
        /// The same `cid` as the batch's entry at this index: answered with its version, as a duplicate.
        case repeats(Int)
    }

    private let service: Service
    private let log: Log
    private let store: Store<Service.State>
    private let shared: LiveHubShared<Service>
    private let options: LiveOptions
    /// The log's state after every record applied here: what the store holds.
    private var durable: LiveLogState<Service.State>
    /// The view published last (kept so an equal new view can share its storage).
    private var lastView: Service.View
    /// Records applied since the log's newest snapshot (those replayed at the open included).
    private var sinceSnapshot: Int
    /// The snapshot being written beside the appends, if any (at most one at a time).
    private var snapshotWrite: Task<Void, Never>?
    private var snapshotInFlight = false
    private var waiters: [Int: [Waiter]] = [:]

    init(service: Service, log: Log, store: Store<Service.State>, shared: LiveHubShared<Service>,
         options: LiveOptions, durable: LiveLogState<Service.State>, view: Service.View, replayed: Int) {
        self.service = service
        sinceSnapshot = replayed
        self.log = log
        self.store = store
        self.shared = shared
        self.options = options
        self.durable = durable
        lastView = view
    }

    /// Works until nothing is left: catches up with the newest head heard of, writes the waiting batch.
    func run() async {
        while let work = shared.takeWork(position: durable.version) {
            if work.target > durable.version, !(await catchUp(to: work.target)) {
                shared.forgetTarget(above: durable.version)
            }
            if !work.batch.isEmpty { await write(work.batch) }
        }
    }

    /// The log's head (for a replica's refresh).
    func logHead() async throws -> Int { try await log.head() }

    /// Writes a snapshot of the state when records were applied since the last one.
    func finish() async {
        await snapshotWrite?.value
        guard sinceSnapshot > 0 else { return }
        sinceSnapshot = 0
        try? await log.writeSnapshot(durable, version: durable.version)
    }

    /// Decides every submission of `batch`, appends the accepted ones as one call, applies them, and
    /// answers each sender.
    private func write(_ batch: [LiveSubmission<Service>]) async {
        let (plans, entries) = plan(batch)
        var unavailable: String?
        if !entries.isEmpty {
            do {
                let range = try await log.append(entries)
                precondition(range.count == entries.count,
                              "an ActionLog's append returned \(range.count) versions for \(entries.count) entries")
                for (index, plan) in plans.enumerated() {
                    switch plan {
                    case .answer: break
                    case .entry(let entry):
                        waiters[range.lowerBound + entry, default: []].append(Waiter(reply: batch[index].reply, repeatsEarlier: false))
                    case .repeats(let entry):
                        waiters[range.lowerBound + entry, default: []].append(Waiter(reply: batch[index].reply, repeatsEarlier: true))
                    }
                }
                if range.lowerBound == durable.version + 1 {
                    // Nobody appended between this log's last record applied here and these: they are
                    // the records at those versions.
                    await apply(zip(range, entries).map { ActionLogRecord(version: $0, entry: $1) })
                } else if !(await catchUp(to: range.upperBound)) {
                    // Durable, not read back yet: the senders are answered once a later catch-up applies them.
                    shared.raiseTarget(to: range.upperBound)
                }
            } catch {
                unavailable = "the log could not record the command (\(error)); try again later"
            }
        }
        for (index, plan) in plans.enumerated() {
            switch plan {
            case .answer(let outcome): batch[index].reply(outcome)
            case .entry, .repeats:
                if let unavailable { batch[index].reply(.unavailable(unavailable)) }
            }
        }
    }

    /// What to do with each submission of `batch`, and the entries to append: each command is decided
    /// against the state as it will be with the batch's earlier entries applied.
    private func plan(_ batch: [LiveSubmission<Service>]) -> ([Plan], [LiveEntry<Service.LiveAction>]) {
        // Only the state is copied: the ids are looked up in `durable` and in this batch's own table, so
        // the table of recent ids (up to ``RecentCommandIDs/capacity``) is not copied for every batch.
        var working = durable.state
        var plans: [Plan] = []
        var entries: [LiveEntry<Service.LiveAction>] = []
        var batchCIDs: [String: Int] = [:]
        plans.reserveCapacity(batch.count)
        for submission in batch {
            if let cid = submission.cid {
                if let entry = batchCIDs[cid] {
                    plans.append(.repeats(entry))
                    continue
                }
                if let version = durable.recentCommands[cid] {
                    plans.append(.answer(.duplicate(version: version)))
                    continue
                }
            }
            switch service.decide(submission.command, state: working, identity: submission.identity) {
            case .accept(let action):
                let entry = LiveEntry(cid: submission.cid, action: action)
                action.reduce(&working)
                if let cid = submission.cid { batchCIDs[cid] = entries.count }
                plans.append(.entry(entries.count))
                entries.append(entry)
            case .reject(let message):
                plans.append(.answer(.rejected(message)))
            }
        }
        return (plans, entries)
    }

    /// Reads and applies the log's records until `target` (or the log's end).
    ///
    /// - Returns: False when a read failed (what was read before stays applied).
    private func catchUp(to target: Int) async -> Bool {
        while durable.version < target {
            let records: [ActionLogRecord<LiveEntry<Service.LiveAction>>]
            do {
                records = try await log.records(after: durable.version, limit: options.readLimit)
            } catch {
                return false
            }
            guard let first = records.first else { return true }
            if first.version > durable.version + 1 {
                // The records this replica lacks were pruned from the log (it fell further behind than
                // the log keeps): it starts again from the log's newest snapshot.
                guard await restart(before: first.version) else { return false }
                continue
            }
            await apply(records)
        }
        return true
    }

    /// Replaces the state with the log's newest snapshot, which must cover every record before
    /// `version`. The senders waiting for records it covers are told to send again: their commands are in
    /// the log, so a resend with the same `cid` is answered as a duplicate.
    ///
    /// - Returns: False when the log could not be read or has no such snapshot (nothing changed).
    private func restart(before version: Int) async -> Bool {
        guard let contents = try? await log.open(), let snapshot = contents.snapshot, snapshot.version >= version - 1 else {
            return false
        }
        durable = snapshot.state
        durable.version = snapshot.version
        sinceSnapshot = 0
        store.dispatch(LiveReset(state: durable.state))
        lastView = service.view(of: durable.state)
        shared.publish(version: durable.version, view: lastView)
        var stale: [Waiter] = []
        for key in waiters.keys where key <= durable.version { stale += waiters.removeValue(forKey: key) ?? [] }
        for waiter in stale { waiter.reply(.unavailable("this server fell behind the log and started again from its snapshot; send again")) }
        return true
    }

    /// Applies `records` (those after ``durable``'s version, in order) to the state and, as one action,
    /// to the store; publishes the new view; answers the senders waiting for them.
    private func apply(_ records: [ActionLogRecord<LiveEntry<Service.LiveAction>>]) async {
        var actions: [Service.LiveAction] = []
        var ready: [(@Sendable (LiveOutcome) -> Void, LiveOutcome)] = []
        var applied = 0
        for record in records {
            // A record that does not follow (read twice, or a log that skipped) ends the batch.
            guard record.version == durable.version + 1 else { break }
            let earlier = record.entry.cid.flatMap { durable.recentCommands[$0] }
            record.entry.reduce(&durable)
            applied += 1
            let outcome: LiveOutcome
            if let earlier {
                outcome = .duplicate(version: earlier)
            } else {
                outcome = .applied(version: record.version)
                actions.append(record.entry.action)
            }
            for waiter in waiters.removeValue(forKey: record.version) ?? [] {
                switch (waiter.repeatsEarlier, outcome) {
                case (true, .applied(let version)): ready.append((waiter.reply, .duplicate(version: version)))
                default: ready.append((waiter.reply, outcome))
                }
            }
        }
        guard applied > 0 else { return }
        // The store and the view first: a sender hears of its command once the view shows it.
        switch actions.count {
        case 0: break
        case 1: store.dispatch(actions[0])
        default: store.dispatch(LiveBatch(actions: actions))
        }
        let view = service.view(of: durable.state)
        if view != lastView { lastView = view }
        shared.publish(version: durable.version, view: lastView)
        for (reply, outcome) in ready { reply(outcome) }
        sinceSnapshot += applied
        if sinceSnapshot >= options.snapshotEvery, !snapshotInFlight { startSnapshot() }
    }

    /// Writes a snapshot of the state as it is now on a task of its own, so the next batches are appended
    /// and answered while it is encoded and synced (a snapshot of a large state takes tens of
    /// milliseconds). One at a time: the next is due after this one is written.
    private func startSnapshot() {
        sinceSnapshot = 0
        snapshotInFlight = true
        let log = log, state = durable, version = durable.version
        snapshotWrite = Task.detached { [weak self] in
            // A failed snapshot loses nothing (the log holds every record); the next one tries again.
            try? await log.writeSnapshot(state, version: version)
            await self?.snapshotWritten()
        }
    }

    private func snapshotWritten() {
        snapshotInFlight = false
    }

    /// Returns once the snapshot being written, if any, is written.
    func snapshotsWritten() async {
        await snapshotWrite?.value
    }
}
