import Foundation

/// A record of a store's actions, with undo and redo over a bounded number of past states.
///
/// Attach its ``middleware`` to a store (last in the list, so it records what is actually reduced). It then
/// records every action of type `A` with the time it was dispatched, and keeps the state before each one
/// so that ``undo`` and ``redo`` can step back and forth. The record can be exported as JSON when `A` is
/// `Codable`, and replayed into a fresh store to reproduce a session.
///
/// ```swift
/// struct Increment: Action { func reduce(_ count: inout Int) { count += 1 } }
/// let history = History<Increment>(undoLimit: 50)
/// let store = Store(0, middleware: [history.middleware])
/// store.dispatch(Increment())
/// store.dispatch(Increment())
/// store.dispatch(history.undo)
/// print(store.state.value, history.entries.count)
/// // Prints "1 3"
/// ```
///
/// Memory: the history keeps up to `undoLimit` states, past ones (for undo) and undone ones (for redo)
/// together, plus one entry per recorded action. A new action that finds `undoLimit` past states kept
/// drops the oldest, in constant time whatever the limit. A state whose large parts are copy-on-write
/// collections costs, per kept state, only the parts that changed since the next kept state; a state of
/// plain values costs its full size per kept state. Entries are never dropped; call
/// ``removeAllEntries()`` to start a new record.
///
/// One history serves one store: attaching its middleware to two stores mixes their records.
public final class History<A: Action & Sendable>: Sendable where A.State: Sendable {
    /// The state type of the store the history records.
    public typealias State = A.State

    /// One recorded step: an action, an undo or a redo.
    public enum Step {
        /// An action was reduced.
        case action(A)
        /// The store stepped back to the state before the last recorded action.
        case undo
        /// The store stepped forward again, over the last undo.
        case redo
    }

    /// A recorded step and the time it was reduced.
    public struct Entry {
        /// What happened.
        public var step: Step
        /// When it reached the history's middleware: when it was dispatched, or, for an action queued
        /// behind another, when its turn came.
        public var time: Date

        /// Creates an entry.
        public init(_ step: Step, time: Date = Date()) {
            self.step = step
            self.time = time
        }
    }

    struct Record {
        var entries: [Entry] = []
        /// The states before the latest recorded actions, oldest first; the oldest is dropped in O(1)
        /// when a new one arrives beyond ``undoLimit``.
        var past: RingBuffer<State>
        /// The states undone, the next one for redo last. Never more than ``undoLimit`` together with
        /// `past`: an undo moves a state from `past` to here, a redo moves it back, an action empties it.
        var future: [State] = []
    }

    /// How many past states are kept for undo.
    public let undoLimit: Int
    let record: Lock<Record>

    /// Creates an empty history that keeps up to `undoLimit` past states.
    ///
    /// - Parameter undoLimit: How many steps ``undo`` can go back; `0` records actions without undo.
    ///   Must not be negative.
    public init(undoLimit: Int = 100) {
        precondition(undoLimit >= 0, "History(undoLimit:) must not be negative (got \(undoLimit)); use 0 to record without undo")
        self.undoLimit = undoLimit
        record = Lock(Record(past: RingBuffer(capacity: undoLimit)))
    }

    /// Every recorded step, oldest first.
    public var entries: [Entry] {
        record.withLock { $0.entries }
    }

    /// Whether ``undo`` would change the state.
    public var canUndo: Bool {
        record.withLock { !$0.past.isEmpty }
    }

    /// Whether ``redo`` would change the state.
    public var canRedo: Bool {
        record.withLock { !$0.future.isEmpty }
    }

    /// Forgets the recorded entries (undo and redo are kept).
    public func removeAllEntries() {
        record.withLock { $0.entries.removeAll() }
    }

    /// Forgets every state ``undo`` and ``redo`` could step to; the recorded entries stay.
    ///
    /// Call it after a change that undo must never step back over, such as taking in edits another
    /// program made to the same data: undo restores whole past states, so stepping back over such a
    /// change would silently drop it.
    ///
    /// ```swift
    /// struct Increment: Action { func reduce(_ count: inout Int) { count += 1 } }
    /// let history = History<Increment>()
    /// let store = Store(0, middleware: [history.middleware])
    /// store.dispatch(Increment())
    /// history.removeUndoStates()
    /// print(history.canUndo, history.entries.count)
    /// // Prints "false 1"
    /// ```
    public func removeUndoStates() {
        record.withLock { record in
            record.past.removeAll()
            record.future.removeAll()
        }
    }

    /// The middleware that records actions of type `A`. Actions of other types pass through unrecorded;
    /// they are not undone separately (an undo restores the state before the last recorded action, which
    /// discards later unrecorded changes too).
    public var middleware: Middleware<State> {
        Middleware { [self] store, action, next in
            switch action {
            case let action as A:
                let before = store.state.value
                record.withLock { record in
                    record.entries.append(Entry(.action(action)))
                    guard undoLimit > 0 else { return }
                    record.past.append(before)     // beyond undoLimit, drops the oldest state
                    record.future.removeAll()
                }
            case let step as TimeTravel<A> where step.history === self:
                record.withLock { $0.entries.append(Entry(step.isUndo ? .undo : .redo)) }
            default:
                break
            }
            next(action)
        }
    }

    /// An action that restores the state before the last recorded action, and keeps the current state for
    /// ``redo``. Without a past state it changes nothing. Dispatch it to the store the history records.
    public var undo: some Action<State> {
        TimeTravel(history: self, isUndo: true)
    }

    /// An action that restores the state that the last ``undo`` left, and keeps the current one for undo.
    /// Without an undone state (none yet, or a new action since) it changes nothing.
    public var redo: some Action<State> {
        TimeTravel(history: self, isUndo: false)
    }

    /// Dispatches `entries` into `store` in order: each action, and each undo or redo through this history
    /// (attach this history's middleware to `store` first, so undo and redo have states to step through).
    ///
    /// Replaying a session's entries into a fresh store that starts from the same state gives the same
    /// final state, because reducing is deterministic. An ``EffectAction``'s effects do not run again:
    /// the actions they sent were recorded as entries of their own, and are replayed in their place.
    public func replay(_ entries: [Entry], into store: Store<State>) {
        for entry in entries {
            switch entry.step {
            case .action(let action): store.replay(action)
            case .undo: store.dispatch(undo)
            case .redo: store.dispatch(redo)
            }
        }
    }

    /// Swaps the current state with the latest past (undo) or undone (redo) state. Called while reducing.
    func travel(_ state: inout State, undo: Bool) {
        record.withLock { record in
            if undo {
                guard let previous = record.past.popLast() else { return }
                record.future.append(state)
                state = previous
            } else {
                guard let next = record.future.popLast() else { return }
                record.past.append(state)
                state = next
            }
        }
    }
}

/// The action behind ``History/undo`` and ``History/redo``.
struct TimeTravel<A: Action & Sendable>: Action, CustomStringConvertible where A.State: Sendable {
    let history: History<A>
    let isUndo: Bool

    func reduce(_ state: inout A.State) {
        history.travel(&state, undo: isUndo)
    }

    var description: String { isUndo ? "undo" : "redo" }
}

extension History.Step: Equatable where A: Equatable {}
extension History.Entry: Equatable where A: Equatable {}
extension History.Step: Sendable where A: Sendable {}
extension History.Entry: Sendable where A: Sendable {}

extension History.Step: Codable where A: Codable {
    private enum CodingKeys: String, CodingKey { case kind, action }

    /// Reads a step written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .kind) {
        case "action": self = .action(try container.decode(A.self, forKey: .action))
        case "undo": self = .undo
        case "redo": self = .redo
        case let kind:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container, debugDescription: "unknown history step kind \"\(kind)\"")
        }
    }

    /// Writes the step as `{"kind": "action", "action": …}`, `{"kind": "undo"}` or `{"kind": "redo"}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .action(let action):
            try container.encode("action", forKey: .kind)
            try container.encode(action, forKey: .action)
        case .undo: try container.encode("undo", forKey: .kind)
        case .redo: try container.encode("redo", forKey: .kind)
        }
    }
}

extension History.Entry: Codable where A: Codable {}

extension History where A: Codable {
    /// The recorded entries as JSON, oldest first: an array of
    /// `{"step": {...}, "time": "2025-11-23T09:17:05.123Z"}`.
    ///
    /// Each time is written in ISO 8601, in UTC, to the millisecond (a finer part is dropped), so the file
    /// reads the same in any tool and time zone.
    public func exportJSON() throws -> Data {
        try Self.json(entries)
    }

    /// Entries read from JSON written by ``exportJSON()``.
    ///
    /// A time may be an ISO 8601 string, with or without fractional seconds and with any UTC offset
    /// (`"2025-11-23T09:17:05.123Z"`, `"2025-11-23T11:17:05+02:00"`), or, as earlier versions of this
    /// package wrote it, a number of seconds since 1 January 2001 (`785582225.123`); both read back as the
    /// same instant, so records exported before the change still load.
    ///
    /// - Throws: `DecodingError` when `data` is not such a record, naming what was wrong where.
    public static func entries(fromJSON data: Data) throws -> [Entry] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            if let seconds = try? container.decode(Double.self) {
                return Date(timeIntervalSinceReferenceDate: seconds)
            }
            let text = try container.decode(String.self)
            guard let date = try? historyTimeFormat.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "history time \"\(text)\" is not an ISO 8601 date and time")
            }
            return date
        }
        return try decoder.decode([Entry].self, from: data)
    }

    /// `entries` as ``exportJSON()`` writes them.
    static func json(_ entries: [Entry]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(historyTimeFormat.format(date))
        }
        return try encoder.encode(entries)
    }
}

/// How a history's JSON writes times: ISO 8601 in UTC with milliseconds. Parsing with it also accepts
/// times without fractional seconds and with other UTC offsets.
private let historyTimeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
