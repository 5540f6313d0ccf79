/// One journaled action and the version it made.
///
/// Versions count the actions of one journal: the first action makes version 1, the next version 2, and
/// so on, with no gaps. Version 0 is the state before any action.
public struct JournalRecord<A> {
    /// The version this action made: one more than the version before it.
    public var version: Int
    /// The action.
    public var action: A

    /// Creates a record of `action`, which made `version`.
    public init(version: Int, action: A) {
        self.version = version
        self.action = action
    }
}

extension JournalRecord: Sendable where A: Sendable {}
extension JournalRecord: Equatable where A: Equatable {}

/// A stored state and the version it is the state after.
///
/// A snapshot at version `n` is the state after the action with version `n` (version 0: before any
/// action), so a journal needs to keep only the records after it.
public struct JournalSnapshot<State> {
    /// The version of the last action this state includes.
    public var version: Int
    /// The state after the action with ``version``.
    public var state: State

    /// Creates a snapshot of `state`, the state after the action with `version`.
    public init(version: Int, state: State) {
        self.version = version
        self.state = state
    }
}

extension JournalSnapshot: Sendable where State: Sendable {}
extension JournalSnapshot: Equatable where State: Equatable {}

/// What a journal held when it was opened: the newest usable snapshot, the records after it, and what
/// was repaired on the way.
///
/// ``ActionJournal/load()`` returns it. ``replayed(onto:)`` turns it into the state it stands for, and
/// ``Store/restoring(from:initialState:dependencies:middleware:onEffectError:)`` makes a store of it.
///
/// ```swift
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let contents = JournalContents<Int, Add>(
///     snapshot: JournalSnapshot(version: 2, state: 10),
///     records: [JournalRecord(version: 3, action: Add(amount: 5))])
/// print(contents.version, contents.replayed(onto: 0))
/// // Prints "3 15"
/// ```
public struct JournalContents<State, A> {
    /// The newest snapshot that could be read, or `nil` when the journal has none.
    public var snapshot: JournalSnapshot<State>?
    /// Every record after the snapshot (after version 0 without one), oldest first, with consecutive
    /// versions.
    public var records: [JournalRecord<A>]
    /// One line per thing the journal repaired or passed over while loading, such as a torn last record
    /// that was cut off or a damaged snapshot that was set aside. Nothing is printed: show them to
    /// whoever runs the program (a log, standard error).
    public var warnings: [String]

    /// Creates the contents of a journal (for a journal of your own).
    ///
    /// - Parameters:
    ///   - snapshot: The newest usable snapshot, if any.
    ///   - records: The records after it, oldest first; their versions must follow on from the
    ///     snapshot's (or from 0) without gaps, which this initializer does not check.
    ///   - warnings: One line per repair or oddity met while reading.
    public init(snapshot: JournalSnapshot<State>? = nil, records: [JournalRecord<A>] = [], warnings: [String] = []) {
        self.snapshot = snapshot
        self.records = records
        self.warnings = warnings
    }

    /// The version the journal is at: the last record's, else the snapshot's, else 0. The next action
    /// appended gets this plus one.
    public var version: Int {
        records.last?.version ?? snapshot?.version ?? 0
    }
}

extension JournalContents: Sendable where State: Sendable, A: Sendable {}
extension JournalContents: Equatable where State: Equatable, A: Equatable {}

extension JournalContents where A: Action, A.State == State {
    /// The snapshot's state (or `initialState` without a snapshot) with every record reduced onto it, in
    /// order.
    ///
    /// Effects are not run: an ``EffectAction`` is reduced with ``Action/reduce(_:)``, which drops the
    /// effect it returns. The actions its effect sent back when it ran live were journaled as records of
    /// their own (when they are of the journaled type), so they are reduced in their place.
    ///
    /// - Complexity: One reduce per record, in place on one state.
    public func replayed(onto initialState: State) -> State {
        JournalReplay.reduce(records.lazy.map(\.action), onto: snapshot?.state ?? initialState)
    }
}

/// Replaying records, written once for ``JournalContents`` and ``ActionLogContents``.
enum JournalReplay {
    /// `state` with each of `actions` reduced onto it in order, effects dropped.
    static func reduce<A: Action>(_ actions: some Sequence<A>, onto state: A.State) -> A.State {
        var state = state
        for action in actions {
            action.reduce(&state)
        }
        return state
    }
}
