import Dispatch
import Foundation
import Stillwater
import StillwaterPostgres
import Synchronization

/// One team's board: a `Store` of ``Board`` kept in a journal, and the way client commands reach it.
///
/// Commands are applied write-ahead: each is checked against the board as it will be, the accepted ones
/// are appended to the journal, the journal is synced (for the file journal, `fsync`), and only then are
/// they dispatched to the store, which clients observe, and answered. So a client never sees a change
/// that a crash could take back, and an acknowledged command survives any restart. Commands that arrive
/// while a sync runs are taken together in the next one (one `fsync` for many commands).
public final class TeamBoard: Sendable {
    /// The store holding the board. Every change goes through ``perform(_:id:)``.
    public let store: Store<Board>
    /// What clients are shown: one scope of the store, shared by every connection of the team, that
    /// tells its observers only when the view changed.
    public let view: Property<BoardView>
    /// The board's identity (``Board/id``).
    public let id: String

    /// The frames recently encoded for this board's clients, shared between them.
    public let frames: FrameCache

    /// The latest views, by version, so a client that reconnects is sent a patch from the version it has.
    let recentViews: RecentViews
    private let viewsSubscription: Subscription
    private let writer: any BoardWriting

    /// Opens a team's board from `journal`: its newest snapshot and the commands after it, reduced without
    /// effects. A journal that holds nothing yet is given `initial` as its first snapshot (version 0), so
    /// the board's identity survives a restart from the first command on.
    ///
    /// - Parameters:
    ///   - journal: Where the board's commands and snapshots are kept.
    ///   - initial: The board of a new journal.
    ///   - snapshotEvery: How many accepted commands between two snapshots (a restart replays at most
    ///     this many).
    ///   - warn: Called with each warning the journal gave when it was read (a torn tail cut back).
    /// - Throws: What the journal throws when it cannot be read or written.
    public convenience init(
        journal: any ActionJournal<Board, BoardAction>, initial: @autoclosure () -> Board,
        snapshotEvery: Int = 1_000, warn: (String) -> Void = { _ in }
    ) throws {
        precondition(snapshotEvery > 0, "TeamBoard(snapshotEvery:) must be positive (got \(snapshotEvery))")
        let contents = try journal.load()
        contents.warnings.forEach(warn)
        let board: Board
        if contents.snapshot == nil && contents.records.isEmpty {
            board = initial()
            try journal.writeSnapshot(board, version: 0)
        } else {
            board = contents.replayed(onto: initial())
        }
        // A replayed tail counts toward the next snapshot, so a clean shutdown right after this start
        // still writes one and the start after it replays nothing.
        let tail = contents.records.count
        self.init(board: board) { store in
            CommandWriter(board: board, journal: journal, store: store, snapshotEvery: snapshotEvery, sinceSnapshot: tail)
        }
    }

    /// A board at `board`, whose commands go through the writer `makeWriter` makes for its store.
    init(board: Board, writer makeWriter: (Store<Board>) -> any BoardWriting) {
        store = Store(board)
        view = store.scope(\.view)
        id = board.id
        frames = FrameCache(board: board.id)
        let recentViews = RecentViews()
        self.recentViews = recentViews
        viewsSubscription = view.observe { recentViews.add($0) }
        writer = makeWriter(store)
    }

    /// A board kept in memory only (a ``MemoryJournal``): for tests and demos; nothing survives the process.
    public convenience init(_ board: Board) {
        // A new memory journal can always be read and written.
        try! self.init(journal: MemoryJournal<Board, BoardAction>(), initial: board)
    }

    /// Applies `command` unless `id` names a command already applied, once the journal holds it, and
    /// says what became of it.
    ///
    /// - Returns: ``CommandOutcome/applied(version:)`` once the command is durable and dispatched (the
    ///   board's version after it), ``CommandOutcome/duplicate(version:)`` when `id` was applied before,
    ///   ``CommandOutcome/rejected(_:)`` when it does not fit the board (nothing changed), or
    ///   ``CommandOutcome/unavailable(_:)`` when the journal could not be written (nothing changed).
    public func perform(_ command: BoardCommand, id: String? = nil) async -> CommandOutcome {
        await withCheckedContinuation { continuation in
            submit(command, id: id) { continuation.resume(returning: $0) }
        }
    }

    /// Hands `command` to the board and returns at once; `reply` is called with its outcome (see
    /// ``perform(_:id:)``), on the board's writer thread. Commands are applied, and answered, in the
    /// order they were submitted.
    public func submit(_ command: BoardCommand, id: String? = nil, reply: @escaping @Sendable (CommandOutcome) -> Void) {
        writer.submit(command, id: id, reply: reply)
    }

    /// Writes a snapshot of the board as it is now when its journal holds commands after its newest
    /// snapshot (replayed at this start or accepted since), so the next start replays nothing; refuses
    /// commands from then on with ``CommandOutcome/unavailable(_:)``. Waits for commands being written.
    ///
    /// - Throws: What the journal throws when the snapshot cannot be written.
    public func close() throws {
        try writer.close()
    }
}

/// Several accepted commands reduced as one action, so the store's observers are told once for the
/// batch. The journal holds them one by one; replaying those gives the same board.
struct BoardBatch: Action {
    var actions: [BoardAction]

    func reduce(_ state: inout Board) {
        for action in actions { action.reduce(&state) }
    }
}

/// The latest views of one board, by version (``capacity`` of them).
final class RecentViews: Sendable {
    /// How many views are kept.
    static let capacity = 128
    private let views = Mutex<[Int: BoardView]>([:])

    /// Keeps `view`, dropping the one `capacity` versions older.
    func add(_ view: BoardView) {
        views.withLock { views in
            views[view.version] = view
            views[view.version - Self.capacity] = nil
        }
    }

    /// The view at `version`, if it is still kept.
    func view(at version: Int) -> BoardView? { views.withLock { $0[version] } }
}

/// Where a ``TeamBoard`` sends its commands: it answers each one, and keeps the board's store.
protocol BoardWriting: Sendable {
    /// Hands over `command`; `reply` is called once with its outcome.
    func submit(_ command: BoardCommand, id: String?, reply: @escaping @Sendable (CommandOutcome) -> Void)
    /// Refuses commands from now on (a file journal writes its closing snapshot).
    func close() throws
}

/// Takes commands from any task, applies them to a copy of the board, journals the accepted ones with
/// one sync per batch, then dispatches them to the store and answers them (see ``TeamBoard``).
///
/// Batches run one at a time on the writer's own serial queue, since a sync blocks its thread.
final class CommandWriter: BoardWriting {
    struct Request: Sendable {
        var command: BoardCommand
        var id: String?
        var reply: @Sendable (CommandOutcome) -> Void
    }

    private enum Phase {
        /// Nothing to do.
        case idle
        /// A batch is being written; requests wait for the next.
        case writing
        /// Closed: requests are refused.
        case closed
    }

    private struct State {
        var phase = Phase.idle
        var waiting: [Request] = []
        /// The board with every journaled command applied: the store's state once the batch being
        /// written has been dispatched.
        var board: Board
        var sinceSnapshot = 0
        /// Whether a write failed and the journal must be read again before the next append. Until a
        /// read succeeds (the disk may still be failing), every batch is refused as unavailable.
        var journalNeedsReading = false
    }

    private let state: Mutex<State>
    private let journal: any ActionJournal<Board, BoardAction>
    private let store: Store<Board>
    private let snapshotEvery: Int
    private let queue = DispatchQueue(label: "live-server.journal")

    /// A writer for `board`, whose journal holds `sinceSnapshot` records after its newest snapshot.
    init(board: Board, journal: any ActionJournal<Board, BoardAction>, store: Store<Board>, snapshotEvery: Int, sinceSnapshot: Int = 0) {
        state = Mutex(State(board: board, sinceSnapshot: sinceSnapshot))
        self.journal = journal
        self.store = store
        self.snapshotEvery = snapshotEvery
    }

    func submit(_ command: BoardCommand, id: String?, reply: @escaping @Sendable (CommandOutcome) -> Void) {
        let request = Request(command: command, id: id, reply: reply)
        let start: Bool? = state.withLock { state in
            switch state.phase {
            case .closed: return nil
            case .writing:
                state.waiting.append(request)
                return false
            case .idle:
                state.waiting.append(request)
                state.phase = .writing
                return true
            }
        }
        switch start {
        case nil: reply(.unavailable("the server is shutting down"))
        case true?: queue.async { self.writeBatches() }
        case false?: break
        }
    }

    /// Writes batches until no request waits.
    private func writeBatches() {
        while let (batch, board) = takeBatch() {
            write(batch, onto: board)
        }
    }

    private func takeBatch() -> ([Request], Board)? {
        state.withLock { state in
            guard case .writing = state.phase else { return nil }
            guard !state.waiting.isEmpty else {
                state.phase = .idle
                return nil
            }
            defer { state.waiting = [] }
            return (state.waiting, state.board)
        }
    }

    private func write(_ batch: [Request], onto board: Board) {
        var next = board
        var outcomes: [CommandOutcome] = []
        var accepted: [BoardAction] = []
        outcomes.reserveCapacity(batch.count)
        for request in batch {
            let outcome = next.accept(request.command, id: request.id)
            if case .applied = outcome { accepted.append(BoardAction(command: request.command, cid: request.id)) }
            outcomes.append(outcome)
        }
        if !accepted.isEmpty {
            do {
                if state.withLock({ $0.journalNeedsReading }) {
                    // The journal restarts from its durable end, which is `board`'s (nothing after it was
                    // ever applied); anything else is a journal changed under us, and refused.
                    let version = try journal.load().version
                    guard version == board.sequence else {
                        throw JournalError(.corrupt, path: "", reason: "the journal is at version \(version), the board at \(board.sequence)")
                    }
                    state.withLock { $0.journalNeedsReading = false }
                }
                for (offset, action) in accepted.enumerated() {
                    try journal.append(action, version: board.sequence + offset + 1)
                }
                try journal.sync()
            } catch {
                // Nothing of this batch is durable: none of it is applied, and each sender may retry. A
                // failed sync has already dropped the batch's records; reading the journal again before
                // the next append also drops any appended before a failed append, so the next batch starts
                // from the durable end. A read that fails leaves that for the batch after.
                state.withLock { $0.journalNeedsReading = true }
                let message = "the board could not be saved (\(error)); try again later"
                for request in batch { request.reply(.unavailable(message)) }
                return
            }
        }
        let snapshotDue = state.withLock { state in
            state.board = next
            state.sinceSnapshot += accepted.count
            guard state.sinceSnapshot >= snapshotEvery else { return false }
            state.sinceSnapshot = 0
            return true
        }
        // One dispatch for the batch: observers (every connection of the board) hear of it once.
        switch accepted.count {
        case 0: break
        case 1: store.dispatch(accepted[0])
        default: store.dispatch(BoardBatch(actions: accepted))
        }
        for (request, outcome) in zip(batch, outcomes) { request.reply(outcome) }
        if snapshotDue {
            // A failed snapshot loses nothing (the journal holds every command); the next one tries again.
            try? journal.writeSnapshot(next, version: next.sequence)
        }
    }

    func close() throws {
        state.withLock { $0.phase = .closed }
        // Waits for the batch being written, if any; the writer then finds the phase closed and stops.
        queue.sync {}
        refuseWaiting()
        // Taken once: a second close (the shutdown watchdog's, say) finds nothing due.
        let (board, due) = state.withLock { state in
            defer { state.sinceSnapshot = 0 }
            return (state.board, state.sinceSnapshot > 0 && !state.journalNeedsReading)
        }
        if due { try journal.writeSnapshot(board, version: board.sequence) }
    }

    private func refuseWaiting() {
        let waiting = state.withLock { state in
            defer { state.waiting = [] }
            return state.waiting
        }
        for request in waiting { request.reply(.unavailable("the server is shutting down")) }
    }
}

/// Counters for the whole server, read by tests (a load run counts what its clients receive).
public final class ServerStats: Sendable {
    /// Connections open now.
    public let connections = Atomic<Int>(0)
    /// Commands accepted.
    public let accepted = Atomic<Int>(0)
    /// Commands refused (error frames sent for a frame).
    public let rejected = Atomic<Int>(0)
    /// Commands answered as duplicates of an accepted one (a retried `cid`), not applied again.
    public let duplicates = Atomic<Int>(0)
    /// Commands not applied because the journal could not take them (the client may retry).
    public let unavailable = Atomic<Int>(0)
    /// Upgrades and hellos refused: a foreign origin, an unknown team, a wrong token.
    public let refused = Atomic<Int>(0)
    /// Reconnected clients sent a patch from the version they had instead of a snapshot.
    public let resumes = Atomic<Int>(0)
    /// Snapshot frames sent.
    public let snapshots = Atomic<Int>(0)
    /// Patch frames sent.
    public let patches = Atomic<Int>(0)
    /// Bytes of all patch frames sent.
    public let patchBytes = Atomic<Int>(0)
    /// Bytes the same clients would have received, had each patch been the whole view instead.
    public let wholeStateBytes = Atomic<Int>(0)
    /// Views a slow client never got because a newer one replaced them while it was behind.
    public let superseded = Atomic<Int>(0)

    /// Creates zeroed counters.
    public init() {}

    /// The counters as a dictionary.
    public func snapshot() -> [String: Int] {
        var result = [
            "connections": connections.load(ordering: .relaxed),
            "accepted": accepted.load(ordering: .relaxed),
            "rejected": rejected.load(ordering: .relaxed),
            "duplicates": duplicates.load(ordering: .relaxed),
            "unavailable": unavailable.load(ordering: .relaxed),
            "refused": refused.load(ordering: .relaxed),
            "resumes": resumes.load(ordering: .relaxed),
            "snapshots": snapshots.load(ordering: .relaxed),
            "patches": patches.load(ordering: .relaxed),
            "patchBytes": patchBytes.load(ordering: .relaxed),
            "wholeStateBytes": wholeStateBytes.load(ordering: .relaxed),
            "superseded": superseded.load(ordering: .relaxed),
        ]
        return result
    }
}

/// A value behind a lock, shareable between tasks (a reference, unlike `Mutex` itself).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// Creates the lock around `value`.
    public init(_ value: Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, under the lock.
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }
}

/// Encoded snapshot and patch frames of one board, kept for the clients that need the same frame.
///
/// A board's version grows with every visible change and only then, so a version names one view, and
/// the patch from version *a* to version *b* is the same text for every client that goes from *a* to *b*.
/// With many clients in step, one of them diffs and encodes, and the others reuse the text. Holds the
/// most recent ``capacity`` frames of each kind.
public final class FrameCache: Sendable {
    /// The identity of the board whose frames these are (sent in snapshots).
    public let board: String

    private struct Entries {
        var snapshots: [Int: String] = [:]
        var patches: [PatchKey: String?] = [:]
        var snapshotOrder: [Int] = []
        var patchOrder: [PatchKey] = []
    }

    private struct PatchKey: Hashable {
        var from: Int
        var to: Int
    }

    private let entries = Mutex(Entries())

    /// How many frames of each kind are kept.
    public let capacity = 64

    /// Creates an empty cache for the board with identity `board`.
    public init(board: String) { self.board = board }

    /// The snapshot frame of `view`.
    public func snapshot(of view: BoardView) -> String {
        if let text = entries.withLock({ $0.snapshots[view.version] }) { return text }
        let text = ServerFrame.snapshot(view, board: board).encoded()
        entries.withLock { entries in
            guard entries.snapshots.updateValue(text, forKey: view.version) == nil else { return }
            entries.snapshotOrder.append(view.version)
            if entries.snapshotOrder.count > capacity {
                entries.snapshots[entries.snapshotOrder.removeFirst()] = nil
            }
        }
        return text
    }

    /// The patch frame from `old` to `new`, or `nil` when they are the same version.
    public func patch(from old: BoardView, to new: BoardView) -> String? {
        let key = PatchKey(from: old.version, to: new.version)
        if let text = entries.withLock({ $0.patches[key] }) { return text }
        let items = ListPatch(from: old.items, to: new.items)
        let title = new.title == old.title ? nil : new.title
        // Two versions may show the same content (an item ticked, then unticked): the patch then says only
        // that the version moved, so a client always knows which version it has.
        let text: String? = old.version == new.version && title == nil && items.isEmpty
            ? nil
            : ServerFrame.patch(from: old.version, version: new.version, title: title,
                                 items: items.isEmpty ? nil : items).encoded()
        entries.withLock { entries in
            guard entries.patches.updateValue(text, forKey: key) == nil else { return }
            entries.patchOrder.append(key)
            if entries.patchOrder.count > capacity {
                entries.patches[entries.patchOrder.removeFirst()] = nil
            }
        }
        return text
    }
}

/// The PostgreSQL journal of the server before it served boards from the library's hubs (live-cluster
/// still reads it until it is ported; ``ClusterLog`` is the one the server uses).
public typealias BoardLog = PostgresJournal<Board, BoardAction>
