import Foundation
import Stillwater
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A store for tests of a feature: each action the test sends, and each action the feature's effects
/// send back, is asserted together with exactly how it changed the state.
///
/// ```swift
/// struct Search: Equatable { var query = ""; var results: [String] = [] }
/// enum SearchAction: EffectAction, Equatable {
///     case query(String), results([String])
///     func reduce(into state: inout Search) -> Effect<SearchAction> {
///         switch self {
///         case .query(let text):
///             state.query = text
///             return .stream { dependencies in
///                 Observable.timer(.milliseconds(300), scheduler: dependencies.scheduler)
///                     .map { _ in SearchAction.results([text + "ui"]) }
///             }
///             .cancellable(id: "search", cancelInFlight: true)
///         case .results(let found):
///             state.results = found
///             return .none
///         }
///     }
/// }
/// @Test func searchWaitsForTheTypingToStop() async {
///     let store = TestStore(initialState: Search(), actions: SearchAction.self)
///     await store.send(.query("sw")) { $0.query = "sw" }
///     store.scheduler.advance(by: .milliseconds(200))
///     await store.send(.query("swift")) { $0.query = "swift" }
///     store.scheduler.advance(by: .milliseconds(300))
///     await store.receive(.results(["swiftui"])) { $0.results = ["swiftui"] }
///     await store.finish()
/// }
/// ```
///
/// Exhaustive by default (``Exhaustivity/on``): a `send(_:assert:)` or
/// ``receive(_:timeout:assert:fileID:filePath:line:column:)`` whose closure does not describe the
/// change exactly fails, with the lines that differ between the expected and the actual state; an action
/// an effect sent must be received before the next send; and ``finish(timeout:fileID:filePath:line:column:)``
/// (or, if the test never calls it, the store's release) fails while effects still run or received
/// actions were not asserted. With ``Exhaustivity/off`` only what the closures set is compared, and
/// unasserted actions and running effects are allowed: for integration tests.
///
/// Time: the store's `dependencies.scheduler` is ``scheduler``, a ``TestScheduler``, so an effect that
/// waits (a debounce, a timer, `scheduler.sleep(for:)`) waits in virtual time, until the test advances
/// the clock. The tasks of `run` effects run on an executor the test store drives: `send`, `receive` and
/// `finish` run them on the test's thread, as far as they can go, before they return or wait. So a `run`
/// effect that calls `scheduler.sleep(for:)` has scheduled its wake-up when `send` returns, and after an
/// advance, `receive` runs the woken task itself: no real time passes for work the test can run, and a
/// loaded machine cannot make the test late. Only a task that awaits something outside the test (a real
/// network call, `Task.sleep`) is waited for in real time, up to ``timeout``. When the test store is
/// released, its store cancels the effects still running, and their tasks, no longer driven by the test,
/// run to their end on Dispatch's global queue: a test that ends with an effect still waiting in a wait
/// that ends when cancelled (the scheduler's `sleep`, `Task.sleep`, an `AsyncStream`) leaks nothing
/// (and, in exhaustive mode, fails, saying which effects still ran). A wait that ignores cancellation
/// keeps its task, and what it holds, for as long as it waits.
/// Failures are reported with ``reportTestFailure(_:fileID:filePath:line:column:)``: to Swift
/// Testing inside a Swift Testing test, to XCTest otherwise.
///
/// Errors an effect does not handle itself are failures too, reported at the next assertion.
///
/// The state and the action type are `Sendable`: effects have the store reduce actions on their own
/// threads while the test reads each step (the action, the state before and after it) on its own, so the
/// compiler checks that both may cross threads, and the test store is `Sendable` by that check. A
/// struct or enum whose members are `Sendable` is one already when it is not `public`; a `public` one
/// says so (`struct Search: Equatable, Sendable`).
public final class TestStore<State: Equatable & Sendable, TestedAction: Stillwater.Action & Sendable>: Sendable
where TestedAction.State == State {
    /// How strictly the store checks.
    public enum Exhaustivity: Sendable, Equatable {
        /// Every change of state, every received action and every running effect must be asserted.
        case on
        /// Only what the assertion closures set is compared; the rest may go unasserted.
        case off
    }

    /// One action reduced by the store, with the state before and after it.
    struct Step: Sendable {
        var action: Reduced
        var before: State
        var after: State
    }

    /// The action of a ``Step``: one of the test's type, or the name of one of another type (dispatched
    /// to ``store`` directly), which no `receive` can match and a failure message only names.
    enum Reduced: Sendable {
        case tested(TestedAction)
        case other(name: String)

        /// Made by the recording middleware from what the store reduced.
        init(_ action: any Stillwater.Action<State>) {
            if let tested = action as? TestedAction {
                self = .tested(tested)
            } else {
                self = .other(name: TestStore.name(action))
            }
        }

        /// The action, if it is of the test's type.
        var tested: TestedAction? {
            if case .tested(let action) = self { action } else { nil }
        }

        /// The action as failure messages name it (see ``TestStore/name(_:)``).
        var name: String {
            switch self {
            case .tested(let action): TestStore.name(action)
            case .other(let name): name
            }
        }
    }

    struct Book: Sendable {
        /// True on the store's deliverer while the sent action goes through the middleware, until the
        /// recording middleware takes it as `sent`.
        var awaitingSent = false
        /// Whether the store has run the sent action (reduced, or dropped by a middleware).
        var sendDone = false
        var sent: Step?
        var received: [Step] = []
        var isFinished = false
        /// How many actions the store reduced (sent or received), for `finish` to see progress.
        var reducedCount = 0
    }

    /// The book, under a lock, shared with the recording middleware.
    final class Keeper: Sendable {
        let lock = Lock(Book())

        func withLock<R>(_ body: (inout Book) -> R) -> R { lock.withLock(body) }
    }

    /// The store under test. Observe its state, or dispatch to it directly, as the feature's code would.
    public let store: Store<State>
    /// The virtual clock of the store's effects (`dependencies.scheduler`).
    public let scheduler: TestScheduler
    /// How strictly the store checks; ``Exhaustivity/on`` unless changed.
    public var exhaustivity: Exhaustivity {
        get { exhaustivityBox.withLock { $0 } }
        set { exhaustivityBox.withLock { $0 = newValue } }
    }
    /// How long, in real time, ``receive(_:timeout:assert:fileID:filePath:line:column:)`` and
    /// ``finish(timeout:fileID:filePath:line:column:)`` wait when they are given no `timeout`: one second
    /// unless changed.
    ///
    /// A passing test never waits this long (each call returns as soon as the action arrives or the
    /// effects end), so a longer timeout costs only failing tests. Raise it where effects' tasks may be
    /// kept waiting for the processor, as on a loaded machine running many tests at once:
    ///
    /// ```swift
    /// enum Ping: EffectAction, Equatable {
    ///     case ping
    ///     func reduce(into count: inout Int) -> Effect<Ping> {
    ///         count += 1
    ///         return .none
    ///     }
    /// }
    /// let store = TestStore(initialState: 0, actions: Ping.self)
    /// store.timeout = .seconds(30)
    /// print(store.timeout)
    /// // Prints "30.0 seconds"
    /// ```
    public var timeout: Duration {
        get { timeoutBox.withLock { $0 } }
        set { timeoutBox.withLock { $0 = newValue } }
    }

    /// Where the effects' tasks run: the store's own calls run their jobs on the test's thread.
    private let executor: TestEffectExecutor
    /// What wakes a waiting `receive` or `finish`: the recording middleware, the executor and the
    /// store's effects signal it.
    let activity = ActivitySignal()
    private let book = Keeper()
    private let errors = ErrorLog()
    private let exhaustivityBox = Lock(Exhaustivity.on)
    private let timeoutBox = Lock(Duration.seconds(1))
    private let origin: (fileID: StaticString, filePath: StaticString, line: UInt, column: UInt)

    /// A test store starting at `initialState`.
    ///
    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - configure: Changes the dependencies of the reduces and effects (the fakes of the test); their
    ///     `scheduler` is already ``scheduler``, `date` is fixed at 1 January 1970 (`.constant`) and `uuid`
    ///     counts from zero (`.incrementing`), so what a reduce stamps into the state is the same every run.
    ///   - middleware: Middleware to run before the store's own recording (which is last).
    ///   - fileID: The file ID of the place a failure found at the test store's release is reported;
    ///     the caller's unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    public init(
        initialState: State,
        dependencies configure: (_ dependencies: inout Dependencies) -> Void = { _ in },
        middleware: [Middleware<State>] = [],
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) {
        let scheduler = TestScheduler()
        var dependencies = Dependencies()
        dependencies.scheduler = scheduler
        dependencies.date = .constant(Date(timeIntervalSince1970: 0))
        dependencies.uuid = .incrementing
        let activity = self.activity
        let executor = TestEffectExecutor(activity: activity)
        dependencies.taskExecutor = executor
        dependencies.effectEnded = { activity.signal() }
        self.executor = executor
        configure(&dependencies)
        let book = self.book
        let errors = self.errors
        let recording = Middleware<State> { store, action, next in
            let before = store.state.value
            next(action)
            let step = Step(action: Reduced(action), before: before, after: store.state.value)
            book.withLock { book in
                book.reducedCount += 1
                if book.awaitingSent {
                    book.awaitingSent = false
                    book.sent = step
                } else {
                    book.received.append(step)
                }
            }
            activity.signal()
        }
        self.scheduler = scheduler
        self.origin = (fileID, filePath, line, column)
        self.store = Store(
            initialState, dependencies: dependencies, middleware: middleware + [recording],
            onEffectError: { errors.append($0) })
    }

    /// A test store starting at `initialState`, for actions of type `actions`: the spelling that needs no
    /// generic arguments.
    ///
    /// ```swift
    /// struct Counter: Equatable { var count = 0 }
    /// enum CounterAction: Action, Equatable {
    ///     case increment
    ///     func reduce(_ state: inout Counter) { state.count += 1 }
    /// }
    /// let store = TestStore(initialState: Counter(), actions: CounterAction.self)
    /// await store.send(.increment) { $0.count = 1 }
    /// print(store.state.count)
    /// // Prints "1"
    /// ```
    ///
    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - actions: The type of the actions the test sends (`CounterAction.self`).
    ///   - configure: Changes the effects' dependencies (the fakes of the test); see
    ///     ``init(initialState:dependencies:middleware:fileID:filePath:line:column:)``.
    ///   - middleware: Middleware to run before the store's own recording (which is last).
    ///   - fileID: The file ID of the place a failure found at the test store's release is reported.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    public convenience init(
        initialState: State, actions: TestedAction.Type,
        dependencies configure: (_ dependencies: inout Dependencies) -> Void = { _ in },
        middleware: [Middleware<State>] = [],
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) {
        self.init(initialState: initialState, dependencies: configure, middleware: middleware,
                  fileID: fileID, filePath: filePath, line: line, column: column)
    }

    deinit {
        // An effect's failure nobody handled is reported whatever the mode: it would be lost otherwise.
        reportEffectErrors(at: (origin.fileID, origin.filePath, origin.line, origin.column))
        // The effects still running are counted first; then the store, released after this body, cancels
        // them, and their tasks, resumed by the cancellation, run on the global queue to their end.
        defer { executor.release() }
        let (isFinished, unasserted) = book.withLock { ($0.isFinished, $0.received) }
        guard !isFinished, exhaustivity == .on else { return }
        let running = store.runningEffectCount
        guard running > 0 || !unasserted.isEmpty else { return }
        reportTestFailure(
            "The TestStore was released with \(Self.describe(running: running, unasserted: unasserted.count)); assert them, or call finish()."
                + (unasserted.isEmpty ? "" : "\n" + Self.describe(unasserted)),
            fileID: origin.fileID, filePath: origin.filePath, line: origin.line, column: origin.column)
    }

    /// The store's current state.
    public var state: State {
        store.state.value
    }

    /// Sends `action` to the store and asserts how it changed the state: `assert` is given the state
    /// before the action and must turn it into the state after it (`{ $0.count = 1 }`); leave it out
    /// when the action changes nothing.
    ///
    /// The action's effects start as in a real store. In exhaustive mode the actions effects sent
    /// earlier must all have been received first.
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - assert: Turns the state before the action into the expected state after it; `nil` when the
    ///     action changes nothing (with ``Exhaustivity/off``: when nothing is to be compared).
    ///   - fileID: The file ID of the place a failure is reported; the caller's unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    public func send(
        _ action: TestedAction, assert: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) rethrows {
        let location = (fileID, filePath, line, column)
        let reduced = dispatchSent(action, at: location)
        // The action was queued when another thread (an effect's) held the store: this thread sleeps
        // until the store says it reduced it.
        _ = reduced.wait(for: Self.sendPatience)
        try checkSent(action, assert: assert, at: location)
    }

    /// How long a `send` waits for its action's turn while another thread holds the store.
    static var sendPatience: Duration { .seconds(5) }

    /// The first half of both `send`s: reports what is pending, then dispatches `action`, marked so that
    /// the recording middleware takes it as the sent step; returns what tells when the store ran it.
    private func dispatchSent(_ action: TestedAction, at location: Location) -> ReducedSignal {
        reportEffectErrors(at: location)
        let exhaustive = exhaustivity == .on
        let pending = book.withLock { book in
            book.isFinished = false           // a send after finish() is checked again when released
            book.sent = nil
            book.sendDone = false
            if !exhaustive { book.received.removeAll() }
            return book.received.count
        }
        if pending > 0 {
            let unasserted = book.withLock { book in
                defer { book.received.removeAll() }
                return book.received
            }
            fail("Received \(pending) action(s) that were not asserted before sending \(Self.name(action)):\n"
                 + Self.describe(unasserted)
                 + "\nReceive them with receive(_:), or set exhaustivity to .off.", at: location)
        }
        // The mark is set and cleared on the store's deliverer, around this action alone: an action an
        // effect's thread has the store reduce meanwhile is recorded as received, not as this one. The
        // deliverer signals the end of the mark: that is how the sender learns its action was run.
        let book = self.book
        let reduced = ReducedSignal()
        store.dispatch(action) { isSending in
            book.withLock { book in
                book.awaitingSent = isSending
                if !isSending { book.sendDone = true }
            }
            if !isSending { reduced.signal() }
        }
        return reduced
    }

    /// The second half of both `send`s, once the store ran the action or ``sendPatience`` passed: checks
    /// the step it made, then lets the effects' tasks run.
    private func checkSent(_ action: TestedAction, assert: ((inout State) throws -> Void)?, at location: Location) rethrows {
        let exhaustive = exhaustivity == .on
        let (done, sent) = book.withLock { ($0.sendDone, $0.sent) }
        guard let sent else {
            fail(done
                 ? "\(Self.name(action)) was not reduced: a middleware dropped it."
                 : "\(Self.name(action)) was not reduced: the store stayed busy for 5 seconds.", at: location)
            return
        }
        try check(sent, assert, exhaustive: exhaustive, what: "sending \(Self.name(action))", at: location)
        // The effects' tasks run as far as they can: a sleep on the scheduler is scheduled, a request to a
        // fake answered, before the test goes on.
        executor.runUntilIdle()
        reportEffectErrors(at: location)
    }

    /// Sends `action` and asserts how it changed the state, as the synchronous
    /// `send(_:assert:)` does; the form an `async` test calls:
    /// `await store.send(.increment) { $0.count = 1 }`.
    ///
    /// Before it returns, the effects' tasks have run as far as they can without the test's help (see
    /// "Time" in the ``TestStore`` overview): a `run` effect that sleeps on ``scheduler`` has scheduled its
    /// wake-up, so the test can advance the clock at once. Unlike the synchronous `send`, this one also
    /// suspends the test, a few turns, so that an effect's step that runs elsewhere gets its turn: on an
    /// actor the test holds (the main actor, in a `@MainActor` test), or on the global executor. Each turn
    /// runs what the effects handed back to the test store; it stops after three turns in a row that
    /// handed nothing back (at most 64 in all), so it waits for no real time.
    ///
    /// - Parameters:
    ///   - action: The action to dispatch.
    ///   - assert: Turns the state before the action into the expected state after it; `nil` when the
    ///     action changes nothing.
    ///   - fileID: The file ID of the place a failure is reported; the caller's unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    public func send(
        _ action: TestedAction, assert: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) async rethrows {
        let location = (fileID, filePath, line, column)
        let reduced = dispatchSent(action, at: location)
        // Queued behind another thread's work: the task suspends until the store resumes it.
        _ = await reduced.wait(for: Self.sendPatience)
        try checkSent(action, assert: assert, at: location)
        await yieldToEffects()
        reportEffectErrors(at: (fileID, filePath, line, column))
    }

    /// How many times an `async` `send` suspends the test at most, for the effects' steps that run
    /// elsewhere.
    private static var maxSendTurns: Int { 64 }

    /// Suspends the test, a turn at a time, running after each turn the effects' jobs handed back to the
    /// test store, until three turns in a row ran nothing (or `maxSendTurns` passed).
    private func yieldToEffects() async {
        var idleTurns = 0
        for _ in 0..<Self.maxSendTurns where idleTurns < 3 {
            await Task.yield()
            idleTurns = executor.runUntilIdle() ? 0 : idleTurns + 1
        }
    }

    /// Waits for the next action an effect sent, asserts it equals `expected`, and asserts how it changed
    /// the state, as `send(_:assert:)` does.
    ///
    /// With ``Exhaustivity/off`` the actions received before one equal to `expected` are skipped.
    ///
    /// - Parameters:
    ///   - expected: The action the next received action must equal.
    ///   - timeout: How long to wait (in real time) for an effect's task to send the action; ``timeout``
    ///     when `nil`. An effect that waits on ``scheduler`` needs the clock advanced first.
    ///   - assert: Turns the state before the received action into the expected state after it.
    ///   - fileID: The file ID of the place a failure is reported; the caller's unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    public func receive(
        _ expected: TestedAction, timeout: Duration? = nil, assert: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) async rethrows where TestedAction: Equatable {
        try await receive(
            description: Self.name(expected), timeout: timeout ?? self.timeout,
            matching: { $0 == expected },
            assert: assert, at: (fileID, filePath, line, column))
    }

    /// Waits for the next action an effect sent, asserts `isExpected` holds for it, and asserts how it
    /// changed the state; for actions that are not `Equatable`, or to match only their case:
    /// `receive(where: { if case .results = $0 { true } else { false } })`.
    ///
    /// - Parameters:
    ///   - isExpected: Whether the next received action is the expected one.
    ///   - timeout: How long to wait (in real time) for an effect's task to send the action; ``timeout``
    ///     when `nil`.
    ///   - assert: Turns the state before the received action into the expected state after it.
    ///   - fileID: The file ID of the place a failure is reported; the caller's unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    public func receive(
        where isExpected: @escaping (TestedAction) -> Bool, timeout: Duration? = nil,
        assert: ((inout State) throws -> Void)? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) async rethrows {
        try await receive(
            description: "an action matching the predicate", timeout: timeout ?? self.timeout,
            matching: isExpected,
            assert: assert, at: (fileID, filePath, line, column))
    }

    /// Drops the received actions not asserted yet (for a test that does not care about them).
    public func skipReceivedActions() {
        book.withLock { $0.received.removeAll() }
    }

    /// Waits for the store's effects to end, then fails (in exhaustive mode) if any still runs or a
    /// received action was not asserted. Call it at the end of a test.
    ///
    /// Effects are waited for up to `timeout`, in real time. An effect that waits on ``scheduler`` (a
    /// debounce, a timer, a task in `scheduler.sleep(for:)`) cannot end while `finish` waits, since only
    /// the test moves that clock. So with ``Exhaustivity/off``, `finish` stops waiting early once the
    /// store is stalled on virtual time: for 50 ms nothing moved (no effect ended, no action was reduced,
    /// the scheduler's pending work stayed the same) while the scheduler held at least one piece of
    /// pending work for each running effect. A task that works in real time (a `run` effect awaiting a
    /// client, a `Task.sleep`) is one running effect more than that work, so it is still waited for, up
    /// to `timeout`. With ``Exhaustivity/on``, `finish` waits up to `timeout`, then reports the effects
    /// still running (and the scheduler's pending work, to advance first).
    ///
    /// ```swift
    /// enum Autosave: EffectAction, Equatable {
    ///     case edit(String), saved
    ///     func reduce(into text: inout String) -> Effect<Autosave> {
    ///         guard case .edit(let new) = self else { return .none }
    ///         text = new
    ///         return .stream { dependencies in
    ///             Observable.timer(.milliseconds(300), scheduler: dependencies.scheduler).map { _ in .saved }
    ///         }
    ///     }
    /// }
    /// let store = TestStore(initialState: "", actions: Autosave.self)
    /// store.exhaustivity = .off
    /// await store.send(.edit("draft")) { $0 = "draft" }     // its timer waits on store.scheduler
    /// await store.finish()                            // returns after about 50 ms, not 1 s
    /// print(store.state, store.scheduler.pendingWorkCount)
    /// // Prints "draft 1"
    /// ```
    ///
    /// - Note: The rule counts effects against pieces of pending work, as it cannot see what each effect
    ///   waits on. Work the test itself scheduled on ``scheduler``, or an effect waiting on two timers at
    ///   once, counts as one more effect waiting on the clock: a busy task beside them may then be left
    ///   running when `finish` returns, after 50 ms without progress (with ``Exhaustivity/off``, where
    ///   running effects are allowed).
    ///
    /// - Parameters:
    ///   - timeout: How long to wait, in real time, for the effects to end; ``timeout`` when `nil`.
    ///   - fileID: The file ID of the place a failure is reported; the caller's unless given.
    ///   - filePath: The path of that file.
    ///   - line: The line of that place.
    ///   - column: The column of that place.
    public func finish(
        timeout: Duration? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath,
        line: UInt = #line, column: UInt = #column
    ) async {
        let location = (fileID, filePath, line, column)
        let stopsWhenStalled = exhaustivity == .off
        let timeout = timeout ?? self.timeout
        let deadline = ContinuousClock.now + timeout
        var seen = activity.look()
        executor.runUntilIdle()
        var last = progress()
        var unchangedSince = ContinuousClock.now
        while last.running > 0, ContinuousClock.now < deadline {
            // Real time passes only for work the test cannot run (a task awaiting something outside):
            // the wait ends when the store or the executor signals, or at the deadline (or at the end
            // of the stall period, when the effects may all wait on the scheduler). No polling.
            let stallCheck = stopsWhenStalled && last.mayAllWaitOnScheduler
            await activity.wait(after: seen, until: stallCheck ? min(deadline, unchangedSince + Self.stallPeriod) : deadline)
            seen = activity.look()
            executor.runUntilIdle()
            let current = progress()
            if current != last {
                (last, unchangedSince) = (current, ContinuousClock.now)
            } else if stopsWhenStalled, current.mayAllWaitOnScheduler,
                      ContinuousClock.now - unchangedSince >= Self.stallPeriod {
                break
            }
        }
        reportEffectErrors(at: location)
        let unasserted = book.withLock { book in
            book.isFinished = true
            return book.received
        }
        let running = store.runningEffectCount
        guard exhaustivity == .on, running > 0 || !unasserted.isEmpty else { return }
        let pending = scheduler.pendingWorkCount
        fail("The test ended with \(Self.describe(running: running, unasserted: unasserted.count))."
             + (running > 0 && pending > 0
                ? " The scheduler holds \(pending) piece(s) of pending work: advance it if they wait on it." : "")
             + (unasserted.isEmpty ? "" : "\nNot asserted:\n" + Self.describe(unasserted)),
             at: location)
    }

    /// How long `finish` sees no progress before it takes the effects for stalled on virtual time.
    static var stallPeriod: Duration { .milliseconds(50) }

    /// What `finish` watches while effects run.
    private struct Progress: Equatable {
        var running: Int
        var pending: Int
        var reduced: Int
        var now: Duration

        /// Whether every running effect may be waiting on the scheduler: it holds a piece of work for each.
        var mayAllWaitOnScheduler: Bool { running <= pending }
    }

    private func progress() -> Progress {
        Progress(running: store.runningEffectCount, pending: scheduler.pendingWorkCount,
                 reduced: book.withLock { $0.reducedCount }, now: scheduler.now)
    }

    // MARK: Checking

    typealias Location = (StaticString, StaticString, UInt, UInt)

    private func receive(
        description: String, timeout: Duration, matching: (TestedAction) -> Bool,
        assert: ((inout State) throws -> Void)?, at location: Location
    ) async rethrows {
        reportEffectErrors(at: location)
        let exhaustive = exhaustivity == .on
        let deadline = ContinuousClock.now + timeout
        while true {
            // Read before looking, so that what happens after the look wakes the wait below.
            let seen = activity.look()
            // What the test can run, it runs: the effects' tasks waiting on the executor.
            executor.runUntilIdle()
            let found: Step?? = book.withLock { book in
                if exhaustive {
                    return book.received.isEmpty ? nil : .some(book.received.removeFirst())
                }
                guard let index = book.received.firstIndex(where: { $0.action.tested.map(matching) ?? false }) else {
                    return nil
                }
                let step = book.received[index]
                book.received.removeFirst(index + 1)
                return .some(step)
            }
            if let found, let step = found {
                if !(step.action.tested.map(matching) ?? false) {
                    fail("Received \(step.action.name), but expected \(description). The action received:\n"
                         + Self.describe([step]), at: location)
                    return
                }
                try check(step, assert, exhaustive: exhaustive, what: "receiving \(step.action.name)",
                          at: location)
                return
            }
            if ContinuousClock.now >= deadline { break }
            // Until the store reduces an action, an effect ends or a job arrives; or the deadline.
            await activity.wait(after: seen, until: deadline)
        }
        let running = store.runningEffectCount
        fail("Expected to receive \(description), but no effect sent it within \(timeout)"
             + (running > 0 ? " (\(running) effect(s) still running; advance the scheduler if they wait on it)." : "."),
             at: location)
    }

    private func check(
        _ step: Step, _ assert: ((inout State) throws -> Void)?, exhaustive: Bool, what: String, at location: Location
    ) rethrows {
        var expected = exhaustive ? step.before : step.after
        try assert?(&expected)
        guard expected != step.after else { return }
        let heading = assert == nil
            ? "The state changed after \(what), but no assertion says how"
            : "The state after \(what) is not the expected one"
        fail("\(heading) (− expected, + actual):\n\(StateDiff.lines(expected: expected, actual: step.after))", at: location)
    }

    private func reportEffectErrors(at location: Location) {
        for error in errors.take() {
            fail("An effect failed with \(String(reflecting: error)), which it did not handle.", at: location)
        }
    }

    private func fail(_ message: String, at location: Location) {
        reportTestFailure(message, fileID: location.0, filePath: location.1, line: location.2, column: location.3)
    }

    /// `action` as a failure message names it: its description, cut after 200 characters (an action may
    /// carry a large value, a whole state even, whose changed lines the diff shows anyway).
    static func name(_ action: Any) -> String {
        let text = String(describing: action)
        guard text.count > 200 else { return text }
        return "\(text.prefix(200))… (\(text.count) characters)"
    }

    /// Each of `steps`, numbered, with how it changed the state: its diff (`−` before, `+` after), or a
    /// line saying it changed nothing.
    static func describe(_ steps: [Step]) -> String {
        steps.enumerated().map { index, step in
            let change = step.before == step.after
                ? "     (the state did not change)"
                : "     state (− before, + after):\n"
                    + StateDiff.lines(expected: step.before, actual: step.after)
                        .split(separator: "\n", omittingEmptySubsequences: false)
                        .map { "     " + $0 }.joined(separator: "\n")
            return "  \(index + 1). \(step.action.name)\n\(change)"
        }.joined(separator: "\n")
    }

    private static func describe(running: Int, unasserted: Int) -> String {
        var parts: [String] = []
        if running > 0 { parts.append("\(running) effect(s) still running") }
        if unasserted > 0 { parts.append("\(unasserted) received action(s) not asserted") }
        return parts.joined(separator: " and ")
    }
}

/// The errors effects failed with that nobody handled, kept until the test's next assertion.
final class ErrorLog: Sendable {
    private let errors = Lock<[any Error]>([])

    func append(_ error: any Error) { errors.withLock { $0.append(error) } }

    func take() -> [any Error] {
        errors.withLock { errors in
            defer { errors.removeAll() }
            return errors
        }
    }
}

/// The executor of a test store's effect tasks (`.run`): it keeps their jobs until the test store runs
/// them, on the test's thread, in the order they came. So a task that sleeps on the test scheduler, or
/// awaits a fake, moves only when `send`, `receive` or `finish` runs it, never behind the test's back and
/// never late: what the test could run, it runs before it waits for anything in real time.
///
/// Once the test store is released (``release()``), nobody drives it any more: the jobs still kept, and
/// every job enqueued later (a task resumed by the cancellation the store's release sends it), run on
/// Dispatch's global queue, still as jobs of this executor. So a task suspended when its test store went
/// away ends, and what it captured is freed, instead of waiting until the process ends.
final class TestEffectExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        /// Set by ``TestEffectExecutor/release()``: jobs go to the global queue, not to `jobs`.
        var isReleased = false
    }

    private let queue = Lock(Queue())
    /// Told of each job kept, so a test store waiting in `receive` or `finish` runs it.
    private let activity: ActivitySignal

    init(activity: ActivitySignal) {
        self.activity = activity
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let kept = queue.withLock { queue in
            guard !queue.isReleased else { return false }
            queue.jobs.append(job)
            return true
        }
        if kept { activity.signal() } else { runOnGlobalQueue(job) }
    }

    /// Runs the waiting jobs, and the jobs they make waiting, until none is left; returns whether any ran.
    @discardableResult
    func runUntilIdle() -> Bool {
        var ran = false
        while let job = queue.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
            ran = true
        }
        return ran
    }

    /// The test store is gone: the kept jobs, and every job enqueued from now on, run on the global queue.
    func release() {
        let jobs = queue.withLock { queue in
            queue.isReleased = true
            defer { queue.jobs = [] }
            return queue.jobs
        }
        for job in jobs { runOnGlobalQueue(job) }
    }

    private func runOnGlobalQueue(_ job: UnownedJob) {
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Tells a `send` that the store ran its action: the store's deliverer calls ``signal()`` once the action
/// went through the middleware, and the sender waits for it, blocked (a thread: ``wait(for:)``) or
/// suspended (a task: the `async` ``wait(for:)``), with no loop and no polling: a waiting sender uses no CPU.
///
/// One state under one lock: `.pending` (nobody waits yet), `.waiting` (a task's continuation, resumed
/// once), `.signalled` or `.timedOut` (the end). The blocking wait uses a semaphore signalled beside it.
final class ReducedSignal: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Bool, Never>)
        case signalled
        case timedOut
    }

    private let state = Lock(State.pending)
    private let semaphore = DispatchSemaphore(value: 0)

    /// The store ran the action: wakes the sender, whichever way it waits.
    func signal() {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            switch state {
            case .waiting(let continuation):
                state = .signalled
                return continuation
            case .pending:
                state = .signalled
                return nil
            case .signalled, .timedOut:
                return nil
            }
        }
        waiter?.resume(returning: true)
        semaphore.signal()
    }

    /// Blocks the calling thread until ``signal()`` or until `patience` passed; `true` when signalled.
    func wait(for patience: Duration) -> Bool {
        if state.withLock({ if case .signalled = $0 { true } else { false } }) { return true }
        let (seconds, attoseconds) = patience.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        return semaphore.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }

    /// Suspends the calling task until ``signal()`` or until `patience` passed; `true` when signalled.
    func wait(for patience: Duration) async -> Bool {
        if state.withLock({ if case .signalled = $0 { true } else { false } }) { return true }
        return await withCheckedContinuation { continuation in
            let signalled: Bool = state.withLock { state in
                guard case .pending = state else { return true }
                state = .waiting(continuation)
                return false
            }
            if signalled {
                continuation.resume(returning: true)
                return
            }
            // The one timer of a wait that had to suspend (an action queued behind another thread's work).
            Task { [self] in
                try? await Task.sleep(for: patience)
                timeOut()
            }
        }
    }

    /// The patience of a suspended wait ran out: resumes it with `false`, unless it was signalled.
    private func timeOut() {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            guard case .waiting(let continuation) = state else { return nil }
            state = .timedOut
            return continuation
        }
        waiter?.resume(returning: false)
    }
}
