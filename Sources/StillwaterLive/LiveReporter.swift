import Foundation
import Synchronization

// How the hub tells its ``LiveObserver`` what happens. Everything here exists only when an observer is
// set: the hub's `reporter` is nil otherwise, and each call site is one optional call, so a hub without an
// observer reads no clock and builds no event. Events are handed to the observer outside every lock.

/// A hub's way to its observer, with the room it serves (``LiveRooms``'s name for it, if any).
final class LiveReporter: Sendable {
    /// What a room being opened by ``LiveRooms`` passes to the hub its opener makes: its name, and the
    /// rooms' observer for a hub whose options name none.
    struct Opening: Sendable {
        var room: String
        var observer: (any LiveObserver)?
    }

    /// Set by ``LiveRooms`` while its opener runs, read by ``LiveHub/open(_:log:initial:options:warn:)``.
    @TaskLocal static var opening: Opening?

    /// Numbers connections across the process (for ``LiveConnectionInfo/connection``).
    private static let connections = Atomic<UInt64>(0)

    let observer: any LiveObserver
    let room: String?

    init(observer: any LiveObserver, room: String?) {
        self.observer = observer
        self.room = room
    }

    /// The reporter of a hub opened with `options`, in the room being opened now if any; nil when
    /// nobody observes.
    static func forHub(_ options: LiveOptions) -> LiveReporter? {
        let opening = opening
        guard let observer = options.observer ?? opening?.observer else { return nil }
        return LiveReporter(observer: observer, room: options.observedRoom ?? opening?.room)
    }

    func record(_ event: LiveEvent) {
        observer.record(event)
    }

    /// A new connection: numbered, and reported open.
    func connectionOpened() -> LiveConnectionTrace {
        let number = Self.connections.wrappingAdd(1, ordering: .relaxed).newValue
        let trace = LiveConnectionTrace(reporter: self, number: number)
        record(.connectionOpened(LiveConnectionInfo(room: room, connection: number, identity: nil)))
        return trace
    }

    /// A command submitted by the server itself (not through a connection), received now.
    func serverCommand() -> LiveCommandOrigin {
        LiveCommandOrigin(connection: nil, received: .now)
    }

    /// A view frame queued for `connections` clients (from the tick, or an admission).
    func viewFrame(_ frame: LiveViewText, connections: Int) {
        guard case .frame(let frame) = frame else { return }
        // Patches start `{"type":"patch"`; everything else a sync sends is a snapshot.
        let kind: LiveViewFrameKind = frame.text.utf8.starts(with: #"{"type":"patch""#.utf8) ? .patch : .snapshot
        record(.viewFrame(room: room, kind: kind, bytes: frame.count, connections: connections))
    }

    /// A log operation other than a snapshot failed.
    func logFailed(_ operation: LiveLogOperation, _ error: any Error) {
        record(.logFailed(room: room, operation: operation, error: String(describing: error)))
    }

    /// Writes a snapshot with `write` and reports how it went; rethrows nothing (a failed snapshot loses
    /// nothing: the log keeps every record).
    static func writeSnapshot(_ reporter: LiveReporter?, version: Int, _ write: () async throws -> Void) async {
        guard let reporter else {
            // Nobody observes: the failure has nowhere to go, and the next snapshot tries again.
            do { try await write() } catch {}
            return
        }
        let start = ContinuousClock.now
        do {
            try await write()
            reporter.record(.snapshotWritten(room: reporter.room, version: version, duration: start.duration(to: .now)))
        } catch {
            reporter.record(.snapshotFailed(room: reporter.room, version: version, error: String(describing: error)))
        }
    }
}

/// Where a command came from and when it arrived: carried with it to the writer when someone observes.
struct LiveCommandOrigin: Sendable {
    var connection: UInt64?
    var received: ContinuousClock.Instant
}

/// One connection's part in the reports: its number, when it opened, who it is, and how it closed.
/// Its state has a lock of its own (a leaf: nothing is called under it), taken only when observed.
final class LiveConnectionTrace: Sendable {
    private enum State {
        /// Open: who the client is (once admitted and the service tells), and the close the server
        /// handed the write loop, if any.
        case open(identity: String?, code: LiveCloseCode?)
        /// Its close was reported.
        case reported
    }

    let reporter: LiveReporter
    let number: UInt64
    private let opened = ContinuousClock.now
    private let state = Mutex(State.open(identity: nil, code: nil))

    init(reporter: LiveReporter, number: UInt64) {
        self.reporter = reporter
        self.number = number
    }

    /// A command of this connection, received now.
    func command() -> LiveCommandOrigin {
        LiveCommandOrigin(connection: number, received: .now)
    }

    /// The client was admitted as `identity` (as the service lets it be told).
    func admitted(identity: String?) {
        state.withLock { state in
            if case .open(_, let code) = state { state = .open(identity: identity, code: code) }
        }
        reporter.record(.connectionAdmitted(LiveConnectionInfo(room: reporter.room, connection: number, identity: identity)))
    }

    /// The connection ends with `code`, a close of the connection's own (its view cannot be sent)
    /// rather than its session's.
    func closeTaken(_ code: LiveCloseCode) {
        state.withLock { state in
            if case .open(let identity, nil) = state { state = .open(identity: identity, code: code) }
        }
    }

    /// The connection ended (the hub forgot it, or the adapter let go of it), after its session handed
    /// the write loop the close `sent` (nil: none): reported once.
    func closed(sent: LiveCloseCode?) {
        let ended = state.withLock { state -> (identity: String?, code: LiveCloseCode?)? in
            guard case .open(let identity, let code) = state else { return nil }
            state = .reported
            return (identity, code ?? sent)
        }
        guard let ended else { return }
        reporter.record(.connectionClosed(LiveConnectionInfo(room: reporter.room, connection: number, identity: ended.identity),
                                          code: ended.code, duration: opened.duration(to: .now)))
    }
}

/// The instants of one batch of commands in the writer, kept while someone observes.
struct LiveBatchTimeline {
    var decideStarted: ContinuousClock.Instant?
    var decided: ContinuousClock.Instant?
    var appendStarted: ContinuousClock.Instant?
    var appended: ContinuousClock.Instant?
    var applied: ContinuousClock.Instant?
    var decisions = 0
    var batchSize: Int

    init(batchSize: Int) { self.batchSize = batchSize }

    mutating func deciding() {
        if decideStarted == nil { decideStarted = .now }
        decisions += 1
    }

    mutating func decidedNow() { decided = .now }
    mutating func appending() { appendStarted = .now }
    mutating func appendedNow() { appended = .now }
    mutating func appliedNow() { applied = .now }

    /// The report of one command of the batch, answered now with `outcome`.
    func report<Service: LiveService>(_ submission: LiveSubmission<Service>, outcome: LiveOutcome, service: Service,
                                      room: String?) -> LiveCommandReport? {
        guard let origin = submission.origin else { return nil }
        // The batch's instants: a step it did not reach stays nil (an append that failed has a start and
        // no end).
        let timeline = LiveCommandTimeline(
            received: origin.received, decideStarted: decideStarted, decided: decided, appendStarted: appendStarted,
            appended: appended, applied: applied, answered: .now, decisions: decisions, batchSize: batchSize)
        return LiveCommandReport(
            room: room, connection: origin.connection, client: submission.client, seq: submission.seq, cid: submission.cid,
            identity: service.observedIdentity(of: submission.identity), outcome: outcome, timeline: timeline)
    }
}

extension LiveReporter {
    /// Runs a ``LiveRooms`` opener for `room`: the hub it opens learns its room (and the rooms'
    /// observer), and `observer` is told how the opening went.
    static func open<Hub>(_ room: String, observer: (any LiveObserver)?, _ body: () async throws -> Hub) async throws -> Hub {
        let start = ContinuousClock.now
        do {
            let hub = try await $opening.withValue(Opening(room: room, observer: observer)) { try await body() }
            observer?.record(.roomOpened(room: room, duration: start.duration(to: .now)))
            return hub
        } catch {
            observer?.record(.roomOpenFailed(room: room, error: String(describing: error)))
            throw error
        }
    }
}
