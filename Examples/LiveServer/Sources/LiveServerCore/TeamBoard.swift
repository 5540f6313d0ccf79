import Stillwater
import Foundation
import Synchronization

/// One team's board: a `Store` of ``Board``, and the way client commands reach it.
public final class TeamBoard: Sendable {
    /// The store holding the board. Every change goes through ``perform(_:)``.
    public let store: Store<Board>
    /// What clients are shown: one scope of the store, shared by every connection of the team, that
    /// tells its observers only when the view changed.
    public let view: Property<BoardView>

    /// The frames recently encoded for this board's clients, shared between them.
    public let frames = FrameCache()

    /// Creates a team's board with its first state.
    public init(_ board: Board) {
        store = Store(board)
        view = store.scope(\.view)
    }

    /// The action that applies a command and reports the outcome from inside the reducer, so the check
    /// (ids exist, indexes in range) and the change happen on the same state, whatever other connections
    /// dispatch meanwhile.
    private struct Apply: Action {
        let command: BoardCommand
        let report: @Sendable (Result<Int, CommandRejection>) -> Void
        func reduce(_ state: inout Board) { report(state.apply(command)) }
    }

    /// Dispatches `command` and returns the board's version after it, or why it was refused (in which
    /// case the board is unchanged).
    public func perform(_ command: BoardCommand) async -> Result<Int, CommandRejection> {
        await withCheckedContinuation { continuation in
            store.dispatch(Apply(command: command) { continuation.resume(returning: $0) })
        }
    }
}

/// Counters for the whole server, read by the load run.
public final class ServerStats: Sendable {
    /// Connections open now.
    public let connections = Atomic<Int>(0)
    /// Commands accepted.
    public let accepted = Atomic<Int>(0)
    /// Commands refused (error frames sent for a frame).
    public let rejected = Atomic<Int>(0)
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

    /// The counters as a JSON-friendly dictionary (memory of this process included).
    public func snapshot() -> [String: Int] {
        var result = [
            "connections": connections.load(ordering: .relaxed),
            "accepted": accepted.load(ordering: .relaxed),
            "rejected": rejected.load(ordering: .relaxed),
            "snapshots": snapshots.load(ordering: .relaxed),
            "patches": patches.load(ordering: .relaxed),
            "patchBytes": patchBytes.load(ordering: .relaxed),
            "wholeStateBytes": wholeStateBytes.load(ordering: .relaxed),
            "superseded": superseded.load(ordering: .relaxed),
        ]
        for (key, value) in ProcessMemory.read() { result[key] = value }
        return result
    }
}

/// Reads this process's memory from `/proc/self/status` (Linux); empty elsewhere.
public enum ProcessMemory {
    /// `rssKiB` (resident now) and `peakRssKiB` (the most resident so far), in KiB.
    public static func read() -> [String: Int] {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return [:] }
        var result: [String: Int] = [:]
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let value = Int(parts[1]) else { continue }
            if parts[0] == "VmRSS:" { result["rssKiB"] = value }
            if parts[0] == "VmHWM:" { result["peakRssKiB"] = value }
        }
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

    /// Creates an empty cache.
    public init() {}

    /// The snapshot frame of `view`.
    public func snapshot(of view: BoardView) -> String {
        if let text = entries.withLock({ $0.snapshots[view.version] }) { return text }
        let text = ServerFrame.snapshot(view).encoded()
        entries.withLock { entries in
            guard entries.snapshots.updateValue(text, forKey: view.version) == nil else { return }
            entries.snapshotOrder.append(view.version)
            if entries.snapshotOrder.count > capacity {
                entries.snapshots[entries.snapshotOrder.removeFirst()] = nil
            }
        }
        return text
    }

    /// The patch frame from `old` to `new`, or `nil` when nothing a client sees changed.
    public func patch(from old: BoardView, to new: BoardView) -> String? {
        let key = PatchKey(from: old.version, to: new.version)
        if let text = entries.withLock({ $0.patches[key] }) { return text }
        let items = ListPatch(from: old.items, to: new.items)
        let title = new.title == old.title ? nil : new.title
        let text: String? = title == nil && items.isEmpty
            ? nil
            : ServerFrame.patch(version: new.version, title: title, items: items.isEmpty ? nil : items).encoded()
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
