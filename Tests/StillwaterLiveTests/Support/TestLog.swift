import Foundation
import Stillwater
import Synchronization

/// An `ActionLog` in memory that several hubs may share (as nodes share a database), whose appends a
/// test can hold open and fail.
final class TestLog<State: Codable & Sendable, Entry: Codable & Sendable>: ActionLog, Sendable {
    private struct Storage {
        var snapshot: JournalSnapshot<State>?
        var records: [ActionLogRecord<Entry>] = []
        /// How many entries each append call carried.
        var appendSizes: [Int] = []
        var holding = false
        /// Appends waiting for ``release()``.
        var held: [CheckedContinuation<Void, Never>] = []
        /// Tests waiting for an append to be held.
        var watchers: [CheckedContinuation<Void, Never>] = []
        var failNext = false
        var failNextSnapshot = false
        var conflicts = 0
        /// Whether snapshots wait for ``releaseSnapshots()``, and those waiting.
        var holdingSnapshots = false
        var heldSnapshots: [CheckedContinuation<Void, Never>] = []
        /// How many `open` calls wait for each other (``gatherOpens(_:)``), and those waiting.
        var gathering = 0
        var gathered: [CheckedContinuation<Void, Never>] = []
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String { "the disk is full" }
    }

    /// The package's one lock (the library's `LiveLock`), whose sections the thread sanitizer sees in
    /// order (see "Locks and the thread sanitizer" in the engine's article).
    private let storage = Lock(Storage())

    private func withLock<R, Failure: Error>(_ body: (inout Storage) throws(Failure) -> R) throws(Failure) -> R {
        try storage.withLock(body)
    }

    init() {}

    var head: Int { withLock { $0.records.last?.version ?? $0.snapshot?.version ?? 0 } }
    var appendSizes: [Int] { withLock { $0.appendSizes } }
    var entries: [Entry] { withLock { $0.records.map(\.entry) } }

    /// From now on, appends wait for ``release()`` before they are durable.
    func hold() { withLock { $0.holding = true } }

    /// Lets every held append finish, and appends from now on pass.
    func release() { resume(clearing: \.holding, \.held) }

    /// Clears `flag` and resumes everything waiting in `waiting`.
    private func resume(clearing flag: WritableKeyPath<Storage, Bool>,
                        _ waiting: WritableKeyPath<Storage, [CheckedContinuation<Void, Never>]>) {
        let held = withLock { storage in
            storage[keyPath: flag] = false
            defer { storage[keyPath: waiting] = [] }
            return storage[keyPath: waiting]
        }
        held.forEach { $0.resume() }
    }

    /// Returns once an append is waiting for ``release()``.
    func appendHeld() async {
        await withCheckedContinuation { continuation in
            let now = withLock { storage in
                guard storage.held.isEmpty else { return true }
                storage.watchers.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Deletes the records up to `version`, as a database keeps only so many before its newest snapshot.
    func prune(through version: Int) { withLock { $0.records.removeAll { $0.version <= version } } }

    /// From now on, snapshots wait for ``releaseSnapshots()`` before they are stored.
    func holdSnapshots() { withLock { $0.holdingSnapshots = true } }

    /// Lets every held snapshot be stored, and snapshots from now on pass.
    func releaseSnapshots() { resume(clearing: \.holdingSnapshots, \.heldSnapshots) }

    /// How many snapshots wait for ``releaseSnapshots()``.
    var snapshotsHeld: Int { withLock { $0.heldSnapshots.count } }

    /// The next append throws, and makes nothing durable.
    func failNextAppend() { withLock { $0.failNext = true } }

    /// The next snapshot throws, and stores nothing.
    func failNextSnapshot() { withLock { $0.failNextSnapshot = true } }

    /// The next `count` calls of `open` each wait until all of them have read, then return what they
    /// read: as processes that open a new shared log at the same moment.
    func gatherOpens(_ count: Int) { withLock { $0.gathering = count } }

    func open() async throws -> ActionLogContents<State, Entry> {
        let contents = read()
        await withCheckedContinuation { continuation in
            let waiting = withLock { storage -> [CheckedContinuation<Void, Never>] in
                guard storage.gathering > 0 else { return [continuation] }
                storage.gathered.append(continuation)
                guard storage.gathered.count == storage.gathering else { return [] }
                storage.gathering = 0
                defer { storage.gathered = [] }
                return storage.gathered
            }
            waiting.forEach { $0.resume() }
        }
        return contents
    }

    private func read() -> ActionLogContents<State, Entry> {
        withLock { storage in
            let after = storage.snapshot?.version ?? 0
            return ActionLogContents(snapshot: storage.snapshot, records: storage.records.filter { $0.version > after })
        }
    }

    func append(_ entries: [Entry]) async throws -> ClosedRange<Int> {
        try await append(entries, ifHeadIs: nil)
    }

    /// Appends only if the head is `head` (checked and appended under one lock, after any hold), as a
    /// database's transaction does.
    func append(_ entries: [Entry], ifHeadIs head: Int) async throws -> ClosedRange<Int> {
        try await append(entries, ifHeadIs: Optional(head))
    }

    /// How many conditional appends were refused because the head had moved.
    var conflicts: Int { withLock { $0.conflicts } }

    private func append(_ entries: [Entry], ifHeadIs expected: Int?) async throws -> ClosedRange<Int> {
        precondition(!entries.isEmpty, "TestLog.append(_:): entries must not be empty")
        let (wait, watchers, fail) = withLock { storage in
            defer { storage.watchers = [] }
            let fail = storage.failNext
            storage.failNext = false
            return (storage.holding, storage.holding ? storage.watchers : [], fail)
        }
        if wait {
            await withCheckedContinuation { continuation in
                withLock { $0.held.append(continuation) }
                watchers.forEach { $0.resume() }
            }
        }
        if fail { throw Failure() }
        return try withLock { storage in
            let head = storage.records.last?.version ?? storage.snapshot?.version ?? 0
            if let expected, expected != head {
                storage.conflicts += 1
                throw ActionLogConflict(head: head)
            }
            storage.appendSizes.append(entries.count)
            let first = head + 1
            for (offset, entry) in entries.enumerated() {
                storage.records.append(ActionLogRecord(version: first + offset, entry: entry))
            }
            return first...(first + entries.count - 1)
        }
    }

    func records(after version: Int, limit: Int) async throws -> [ActionLogRecord<Entry>] {
        withLock { storage in Array(storage.records.filter { $0.version > version }.prefix(limit)) }
    }

    func head() async throws -> Int { head }

    func writeSnapshot(_ state: State, version: Int) async throws {
        await withCheckedContinuation { continuation in
            let now = withLock { storage in
                guard storage.holdingSnapshots else { return true }
                storage.heldSnapshots.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        try withLock { storage throws(Failure) in
            if storage.failNextSnapshot {
                storage.failNextSnapshot = false
                throw Failure()
            }
            if (storage.snapshot?.version ?? -1) < version { storage.snapshot = JournalSnapshot(version: version, state: state) }
        }
    }
}
