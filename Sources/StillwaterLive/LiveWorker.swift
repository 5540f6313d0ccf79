import Foundation
import Stillwater

/// A command waiting for the hub's writer.
struct LiveSubmission<Service: LiveService>: Sendable {
    var command: Service.Command
    var cid: String?
    /// The client that numbered the command, with its number.
    var client: LiveClientID?
    var seq: Int?
    var identity: Service.Identity
    /// Where and when it arrived: only while someone observes (``LiveOptions/observer``).
    var origin: LiveCommandOrigin? = nil
    var reply: @Sendable (LiveOutcome) -> Void
}

/// The hub's writer and reader of its log: takes the submitted commands in batches, records the decided
/// ones with one conditional append per batch, and applies the log's records in order, its own and (for
/// a replica of a shared log) everyone else's.
///
/// One run loop at a time uses it (``LiveHubShared`` starts it and says when to stop), so the state
/// below changes only between that loop's awaits. The service's code (``LiveService/decide(_:state:identity:)``,
/// `reduce`) runs here, on the actor, never under a lock.
actor LiveWorker<Service: LiveService> {
    typealias Log = any ActionLog<LiveLogState<Service.State>, LiveEntry<Service.LiveAction>>

    /// What a batch does with one submission.
    private enum Plan {
        /// Answered without the log (refused without a number, a duplicate, out of order, expired).
        case answer(LiveOutcome)
        /// Recorded as the batch's entry at this index.
        case entry(Int)
        /// The same command as the batch's entry at this index (the same `cid`, or the same client and
        /// number): answered as its duplicate.
        case repeats(Int)
    }

    /// How many times one batch is decided again after other nodes appended first, before its commands
    /// are answered `unavailable`.
    private static var maxDecisions: Int { 100 }

    private let service: Service
    private let log: Log
    private let store: Store<Service.State>
    private let shared: LiveHubShared<Service>
    private let options: LiveOptions
    /// The log's state after every record applied here: what the store holds.
    private var durable: LiveLogState<Service.State>
    /// Records applied since the log's newest snapshot (those replayed at the open included).
    private var sinceSnapshot: Int
    /// The snapshot being written beside the appends, if any (at most one at a time).
    private var snapshotWrite: Task<Void, Never>?
    private var snapshotInFlight = false
    /// The log refused a write and stopped (a file journal after a failed write or flush): it is opened
    /// again before the next append.
    private var logStopped = false
    /// The way to the hub's observer; nil when nobody observes.
    private let reporter: LiveReporter?
    /// The instants of the batch being written, while someone observes.
    private var timeline: LiveBatchTimeline?

    init(service: Service, log: Log, store: Store<Service.State>, shared: LiveHubShared<Service>,
         options: LiveOptions, durable: LiveLogState<Service.State>, replayed: Int, reporter: LiveReporter?) {
        self.service = service
        self.reporter = reporter
        sinceSnapshot = replayed
        self.log = log
        self.store = store
        self.shared = shared
        self.options = options
        self.durable = durable
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
        let log = log, state = durable
        await LiveReporter.writeSnapshot(reporter, version: state.version) { try await log.writeSnapshot(state, version: state.version) }
    }

    /// Decides every submission of `batch` on the state at the log's head, appends the recorded ones as
    /// one call that succeeds only if the head did not move, applies them, and answers every sender in
    /// the order submitted. When another node appended first, reads its records and decides again.
    private func write(_ batch: [LiveSubmission<Service>]) async {
        timeline = reporter.map { _ in LiveBatchTimeline(batchSize: batch.count) }
        guard await reopenIfStopped() else {
            let (plans, entries) = plan(batch)
            return answer(batch, plans, entryOutcomes: Array(
                repeating: .unavailable("the log could not record the command; try again later"), count: entries.count))
        }
        // Submissions whose action cannot be stored: refused (a numbered one's refusal recorded in its place).
        var unstorable: [Int: String] = [:]
        for _ in 0..<Self.maxDecisions {
            timeline?.deciding()
            let (plans, entries) = plan(batch, unstorable: unstorable)
            timeline?.decidedNow()
            guard !entries.isEmpty else { return answer(batch, plans, entryOutcomes: []) }
            let head = durable.version
            do {
                timeline?.appending()
                let range = try await log.append(entries, ifHeadIs: head)
                timeline?.appendedNow()
                precondition(range == head + 1 ... head + entries.count,
                             "an ActionLog's append(_:ifHeadIs: \(head)) returned \(range) for \(entries.count) entries")
                let outcomes = await apply(zip(range, entries).map { ActionLogRecord(version: $0, entry: $1) })
                timeline?.appliedNow()
                return answer(batch, plans, entryOutcomes: outcomes)
            } catch let conflict as ActionLogConflict {
                // Another node recorded first: the decisions above saw an old state. Catch up, decide again.
                guard await catchUp(to: conflict.head), durable.version >= conflict.head else { break }
            } catch {
                // An action that cannot be encoded fails the whole append: find it (only on this path, so
                // the usual append encodes once), refuse it, and record the rest.
                let found = Self.unencodable(entries, plans: plans)
                if !found.isEmpty {
                    unstorable.merge(found) { first, _ in first }
                    continue
                }
                // A file journal stops after a failed write or flush (what reached the disk is unknown)
                // and takes writes again only once opened again, which checks its tail as after a crash.
                if let failure = error as? JournalError, failure.kind == .stopped || failure.kind == .unwritable {
                    logStopped = true
                }
                reporter?.logFailed(.append, error)
                // The log's own words may name server paths: the client is told only that it failed.
                return answer(batch, plans, entryOutcomes: Array(
                    repeating: .unavailable("the log could not record the command; try again later"), count: entries.count))
            }
        }
        let (plans, entries) = plan(batch, unstorable: unstorable)
        answer(batch, plans, entryOutcomes: Array(
            repeating: .unavailable("the log is busy with other servers' commands; try again later"), count: entries.count))
    }

    /// The submissions (by index in the batch) whose entry does not encode as JSON, with why, in the
    /// protocol's words: a NaN in the action, an `encode(to:)` that throws.
    private static func unencodable(_ entries: [LiveEntry<Service.LiveAction>], plans: [Plan]) -> [Int: String] {
        var found: [Int: String] = [:]
        for (index, plan) in plans.enumerated() {
            guard case .entry(let entry) = plan else { continue }
            do {
                _ = try JSONEncoder().encode(entries[entry])
            } catch {
                found[index] = "the command's action cannot be stored: " + LiveJSON.describe(encoding: error)
            }
        }
        return found
    }

    /// Opens the log again when a write failed and stopped it: the next batch tries, so writing resumes
    /// once the cause is gone (space on the disk). The reopened log holds what was durable, which is what
    /// this worker applied; records it holds beyond that (none, for a log with one writer) are applied.
    ///
    /// - Returns: False while the log cannot be opened (the batch is answered `unavailable`).
    private func reopenIfStopped() async -> Bool {
        guard logStopped else { return true }
        guard let contents = await openLog(for: .reopen) else { return false }
        logStopped = false
        let newer = contents.records.filter { $0.version > durable.version }
        if let first = newer.first, first.version == durable.version + 1 { await apply(newer) }
        return true
    }

    /// The log's contents, opened again for `operation`; nil when it cannot be opened (told to the
    /// observer).
    private func openLog(for operation: LiveLogOperation) async -> ActionLogContents<LiveLogState<Service.State>, LiveEntry<Service.LiveAction>>? {
        do {
            return try await log.open()
        } catch {
            reporter?.logFailed(operation, error)
            return nil
        }
    }

    /// Answers every submission of `batch` in order: `plans` says how, `entryOutcomes` holds the outcome of
    /// each entry the batch recorded.
    private func answer(_ batch: [LiveSubmission<Service>], _ plans: [Plan], entryOutcomes: [LiveOutcome]) {
        for (submission, plan) in zip(batch, plans) {
            let outcome: LiveOutcome
            switch plan {
            case .answer(let answer):
                outcome = answer
            case .entry(let index):
                outcome = entryOutcomes[index]
            case .repeats(let index):
                if case .applied(let version) = entryOutcomes[index] {
                    outcome = .duplicate(version: version)
                } else {
                    outcome = entryOutcomes[index]
                }
            }
            submission.reply(outcome)
            if let timeline, let report = timeline.report(submission, outcome: outcome, service: service, room: reporter?.room) {
                reporter?.record(.command(report))
            }
        }
    }

    /// What to do with each submission of `batch`, and the entries to append: each command is decided
    /// against the state as it will be with the batch's earlier entries applied.
    ///
    /// A submission in `unstorable` is refused with its message in place of its action: a numbered one
    /// as a recorded refusal (its number is used), any other without the log.
    private func plan(
        _ batch: [LiveSubmission<Service>], unstorable: [Int: String] = [:]
    ) -> ([Plan], [LiveEntry<Service.LiveAction>]) {
        // Only the state is copied: ids are looked up in `durable` and in this batch's own tables, so the
        // tables the log remembers are not copied for every batch.
        var working = durable.state
        var plans: [Plan] = []
        var entries: [LiveEntry<Service.LiveAction>] = []
        var batchCIDs: [String: Int] = [:]
        /// Per client numbering in this batch: its next number, and the entry of each number it recorded.
        var batchClients: [LiveClientID: (next: Int, entries: [Int: Int])] = [:]
        let time = LiveClock.milliseconds(options.now())
        plans.reserveCapacity(batch.count)
        for (index, submission) in batch.enumerated() {
            let decision = unstorable[index].map { LiveDecision<Service.LiveAction>.reject($0) }
            if let client = submission.client, let seq = submission.seq {
                let known = durable.clients[client]
                let numbering = batchClients[client]
                if known == nil, numbering == nil, durable.clients.isExpired(client) {
                    plans.append(.answer(.clientExpired(Self.expiredMessage(durable.clients))))
                    continue
                }
                let next = numbering?.next ?? (known?.seq ?? 0) + 1
                if seq < next {
                    if let index = numbering?.entries[seq] {
                        plans.append(.repeats(index))
                    } else if let known, known.seq == seq, let refusal = known.refusal {
                        plans.append(.answer(.rejected(refusal)))
                    } else {
                        plans.append(.answer(.duplicate(version: known?.version ?? durable.version)))
                    }
                    continue
                }
                if seq > next {
                    plans.append(.answer(.outOfOrder(expected: next)))
                    continue
                }
                let entry: LiveEntry<Service.LiveAction>
                switch decision ?? service.decide(submission.command, state: working, identity: submission.identity) {
                case .accept(let action):
                    action.reduce(&working)
                    entry = LiveEntry(client: client, seq: seq, time: time, action: action, cid: submission.cid)
                case .reject(let message):
                    entry = LiveEntry(client: client, seq: seq, time: time, action: nil, refusal: message, cid: submission.cid)
                }
                var updated = numbering ?? (next: next, entries: [:])
                updated.next = seq + 1
                updated.entries[seq] = entries.count
                batchClients[client] = updated
                if let cid = submission.cid { batchCIDs[cid] = entries.count }
                plans.append(.entry(entries.count))
                entries.append(entry)
                continue
            }
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
            switch decision ?? service.decide(submission.command, state: working, identity: submission.identity) {
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

    private static func expiredMessage(_ clients: LiveClientTable) -> String {
        let days = Double(clients.retention) / 86_400_000
        let age = days >= 1 ? "\(Int(days.rounded())) days" : "\(clients.retention / 1_000) seconds"
        return "this client id is no longer remembered (clients are kept \(age) after their last command); "
            + "the command was not applied: start again without the id"
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
                reporter?.logFailed(.read, error)
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
    /// `version`.
    ///
    /// - Returns: False when the log could not be read or has no such snapshot (nothing changed).
    private func restart(before version: Int) async -> Bool {
        guard let contents = await openLog(for: .restart) else { return false }
        guard let snapshot = contents.snapshot, snapshot.version >= version - 1 else {
            reporter?.logFailed(.restart, LiveHubError("the log's newest snapshot does not cover the records before \(version)"))
            return false
        }
        durable = snapshot.state
        durable.version = snapshot.version
        sinceSnapshot = 0
        store.dispatch(LiveReset(state: durable.state))
        shared.publish(version: durable.version, state: durable.state)
        return true
    }

    /// Applies `records` (those after ``durable``'s version, in order) to the state and, as one action,
    /// to the store; publishes the new state (the views are made when clients need them).
    ///
    /// - Returns: The outcome of each record applied, in order: applied, a duplicate of an earlier
    ///   command, or (a numbered command the service refused) rejected.
    @discardableResult
    private func apply(_ records: [ActionLogRecord<LiveEntry<Service.LiveAction>>]) async -> [LiveOutcome] {
        var actions: [Service.LiveAction] = []
        var outcomes: [LiveOutcome] = []
        outcomes.reserveCapacity(records.count)
        for record in records {
            // A record that does not follow (read twice, or a log that skipped) ends the batch.
            guard record.version == durable.version + 1 else { break }
            let entry = record.entry
            let earlier = entry.isNew(in: durable) ? nil : Self.recordedVersion(of: entry, in: durable)
            entry.reduce(&durable)
            if let earlier {
                outcomes.append(.duplicate(version: earlier))
            } else if let action = entry.action {
                outcomes.append(.applied(version: record.version))
                actions.append(action)
            } else {
                outcomes.append(.rejected(entry.refusal ?? "refused"))
            }
        }
        guard !outcomes.isEmpty else { return outcomes }
        // The store and the view first: a sender hears of its command once the view shows it.
        switch actions.count {
        case 0: break
        case 1: store.dispatch(actions[0])
        default: store.dispatch(LiveBatch(actions: actions))
        }
        shared.publish(version: durable.version, state: durable.state)
        sinceSnapshot += outcomes.count
        if sinceSnapshot >= options.snapshotEvery, !snapshotInFlight { startSnapshot() }
        return outcomes
    }

    /// The version at which `entry`'s command was recorded before (one `isNew(in:)` says is not new).
    private static func recordedVersion(of entry: LiveEntry<Service.LiveAction>, in state: LiveLogState<Service.State>) -> Int {
        if let client = entry.client, let record = state.clients[client] { return record.version }
        if let cid = entry.cid, let version = state.recentCommands[cid] { return version }
        return state.version
    }

    /// Writes a snapshot of the state as it is now on a task of its own, so the next batches are appended
    /// and answered while it is encoded and synced (a snapshot of a large state takes tens of
    /// milliseconds). One at a time: the next is due after this one is written.
    private func startSnapshot() {
        sinceSnapshot = 0
        snapshotInFlight = true
        let log = log, state = durable, version = durable.version, reporter = reporter
        snapshotWrite = Task.detached { [weak self] in
            // A failed snapshot loses nothing (the log holds every record); the next one tries again. The
            // observer, if any, is told.
            await LiveReporter.writeSnapshot(reporter, version: version) { try await log.writeSnapshot(state, version: version) }
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
