import Synchronization

/// Many rooms served by one server, each a ``LiveHub`` of its own that is opened from its log on the
/// first join and closed once nobody was in it for ``idleTimeout``.
///
/// A room is named by a string (a team, a document id); `open` makes its hub, from its own log. A room
/// nobody joined costs nothing but its log. An open room whose last client left waits
/// ``idleTimeout``, then closes: its commands in progress are answered, a snapshot is written (so the
/// next open replays nothing), and its hub is let go. The next join opens it again. The rooms tick their
/// open hubs themselves (``LiveHub/run()``), which schedules no timer while no client is behind.
///
/// ```swift
/// import StillwaterLive
///
/// struct Notes: Codable, Sendable { var lines: [String] = [] }
/// struct Write: Action, Codable, Sendable {
///     var line: String
///     func reduce(_ state: inout Notes) { state.lines.append(line) }
/// }
/// struct NotesView: LiveView {
///     var count: Int
///     static let liveFields: [LiveField<NotesView>] = [.value("count", \.count)]
/// }
/// struct Notebook: LiveService {
///     func view(of state: Notes) -> NotesView { NotesView(count: state.lines.count) }
///     func decide(_ command: String, state: Notes, identity: String) -> LiveDecision<Write> { .accept(Write(line: command)) }
///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("guest") }
/// }
/// typealias NotesLog = MemoryJournal<LiveLogState<Notes>, LiveEntry<Write>>
/// let logs = ["alpha": NotesLog(), "beta": NotesLog()]   // a room's log outlives its hub
/// let rooms = LiveRooms<Notebook>(idleTimeout: .milliseconds(50)) { room in
///     guard let log = logs[room] else { throw LiveHubError("no room named \(room)") }
///     return try await LiveHub.open(Notebook(), log: log, initial: Notes())
/// }
/// let alpha = try await rooms.connect(to: "alpha")
/// alpha.receive(#"{"type":"hello","protocol":1}"#)
/// _ = await alpha.nextBatch()
/// _ = try await rooms.hub(for: "alpha").perform("hello", as: "guest")
/// print(rooms.openRooms.count)
/// alpha.transportClosed()
/// while !rooms.openRooms.isEmpty {                        // nobody in it: it closes after the idle timeout
///     try await Task.sleep(for: .milliseconds(10))
/// }
/// print(rooms.openRooms.count, try await rooms.hub(for: "alpha").view.count)
/// await rooms.close()                                    // at shutdown: every room answers and writes its snapshot
/// // Prints "1",
/// //        "0 1"
/// ```
///
/// Call ``close()`` at shutdown. Rooms let go without it stop ticking their open hubs, without writing
/// their snapshots (the logs keep every record: the next open replays them).
///
/// Cost: one entry per open room; an open room costs its hub (its state and recent views) and one
/// waiting task; a closing room a task until its snapshot is written.
public final class LiveRooms<Service: LiveService>: Sendable {
    /// Opens a room's hub from its log. Throw to refuse a room (a name that names none).
    public typealias Opener = @Sendable (String) async throws -> LiveHub<Service>

    private enum Room {
        /// Being opened; joins wait for it.
        case opening(Task<LiveHub<Service>, any Error>)
        /// Open: its hub, the task that ticks it, and the close scheduled while nobody is in it.
        case open(LiveHub<Service>, ticking: Task<Void, Never>, idle: Task<Void, Never>?)
        /// Being closed; a join waits for the close, then opens it again.
        case closing(Task<Void, Never>)
    }

    private struct State {
        var rooms: [String: Room] = [:]
        /// Closed by ``close()``: no room opens any more.
        var closed = false
    }

    /// How long an open room with no client waits before it closes.
    public let idleTimeout: Duration
    /// Told when rooms open, fail to open and close, and (for the hubs `open` makes without an observer
    /// of their own) everything their hubs do, each event naming its room.
    public let observer: (any LiveObserver)?
    private let open: Opener
    private let state = LiveLock(State())

    /// Rooms opened by `open` on their first join and closed once idle for `idleTimeout`.
    ///
    /// - Parameters:
    ///   - idleTimeout: How long an open room with no client stays open (30 s by default); at least zero.
    ///   - open: Opens the hub of the room with this name, from its own log. Called once per opening,
    ///     outside every lock; joins of the room meanwhile wait for it.
    public convenience init(idleTimeout: Duration = .seconds(30), open: @escaping Opener) {
        self.init(idleTimeout: idleTimeout, observer: nil, open: open)
    }

    /// Rooms opened by `open` on their first join and closed once idle for `idleTimeout`, told to
    /// `observer`.
    ///
    /// - Parameters:
    ///   - idleTimeout: How long an open room with no client stays open (30 s by default); at least zero.
    ///   - observer: Told when rooms open (``LiveEvent/roomOpened(room:duration:)``), fail to open and
    ///     close. A hub that `open` makes without a ``LiveOptions/observer`` of its own reports to it
    ///     too, every event with its room's name; nil reports nothing.
    ///   - open: Opens the hub of the room with this name, from its own log. Called once per opening,
    ///     outside every lock; joins of the room meanwhile wait for it.
    public init(idleTimeout: Duration = .seconds(30), observer: (any LiveObserver)?, open: @escaping Opener) {
        precondition(idleTimeout >= .zero, "LiveRooms(idleTimeout:) must not be negative (got \(idleTimeout))")
        self.idleTimeout = idleTimeout
        self.observer = observer
        self.open = open
    }

    deinit {
        // Let go without close(): the open rooms stop being ticked (their hubs go with their last
        // references; no snapshot is written — close() writes them).
        for room in state.withLock({ Array($0.rooms.values) }) {
            switch room {
            case .open(_, let ticking, let idle):
                ticking.cancel()
                idle?.cancel()
            case .opening(let opening):
                opening.cancel()
            case .closing:
                break
            }
        }
    }

    /// The names of the rooms open now (being closed or opened not counted), sorted.
    public var openRooms: [String] {
        state.withLock { state in
            state.rooms.compactMap { name, room in
                if case .open = room { name } else { nil }
            }.sorted()
        }
    }

    /// A new connection to `room`, opening the room first when it is not open. The connection is counted
    /// in the room at once, so the room does not close under it.
    ///
    /// - Parameters:
    ///   - room: The room's name.
    ///   - transport: What the adapter saw of the connection, as for ``LiveHub/connect(transport:)``.
    /// - Throws: What `open` threw for this room, or ``LiveHubError`` once the rooms are closed.
    public func connect(to room: String, transport: [String: String] = [:]) async throws -> LiveConnection<Service> {
        try await enter(room, connecting: transport).connection!
    }

    /// The hub of `room`, opening it when it is not open. A room opened only through this (no
    /// connection) closes after ``idleTimeout`` as an empty room does.
    ///
    /// - Throws: What `open` threw for this room, or ``LiveHubError`` once the rooms are closed.
    public func hub(for room: String) async throws -> LiveHub<Service> {
        try await enter(room, connecting: nil).hub
    }

    /// Closes every open room (each answers its commands and writes its snapshot) and opens no more.
    public func close() async {
        let rooms = state.withLock { state -> [String: Room] in
            state.closed = true
            defer { state.rooms = [:] }
            return state.rooms
        }
        for (name, room) in rooms {
            switch room {
            case .opening(let opening):
                // Its failure, if it fails, is reported by the opening itself.
                guard let hub = try? await opening.value else { continue }
                await hub.close()
                observer?.record(.roomClosed(room: name))
            case .open(let hub, let ticking, let idle):
                idle?.cancel()
                await hub.close()
                ticking.cancel()
                observer?.record(.roomClosed(room: name))
            case .closing(let closing):
                await closing.value
            }
        }
    }

    // MARK: Opening and closing

    /// What ``enter(_:connecting:)`` does next.
    private enum Step {
        case done(LiveHub<Service>, LiveConnection<Service>?)
        case wait(Task<Void, Never>)
        case opened(Task<LiveHub<Service>, any Error>)
    }

    /// The open hub of `room` and, when `transport` is given, a new connection to it made under the
    /// rooms' lock (so that an idle close cannot come between); opens the room first, or waits for its
    /// close or its opening.
    private func enter(_ room: String, connecting transport: [String: String]?) async throws
        -> (hub: LiveHub<Service>, connection: LiveConnection<Service>?) {
        while true {
            let next = try state.withLock { state throws(LiveHubError) -> Step in
                guard !state.closed else { throw LiveHubError("the rooms are closed") }
                switch state.rooms[room] {
                case .open(let hub, let ticking, let idle)?:
                    let connection = transport.map { hub.connect(transport: $0) }
                    // A room entered only to read its hub closes once idle, as an empty room does.
                    if connection != nil || !hub.shared.connections.isEmpty {
                        idle?.cancel()
                        state.rooms[room] = .open(hub, ticking: ticking, idle: nil)
                    } else if idle == nil {
                        state.rooms[room] = .open(hub, ticking: ticking, idle: idleClose(room, hub))
                    }
                    return .done(hub, connection)
                case .closing(let closing)?:
                    return .wait(closing)
                case .opening(let opening)?:
                    return .opened(opening)
                case nil:
                    let opening = Task { [open, observer] in try await LiveReporter.open(room, observer: observer) { try await open(room) } }
                    state.rooms[room] = .opening(opening)
                    return .opened(opening)
                }
            }
            switch next {
            case .done(let hub, let connection):
                return (hub, connection)
            case .wait(let closing):
                await closing.value
            case .opened(let opening):
                let hub: LiveHub<Service>
                do {
                    hub = try await opening.value
                } catch {
                    // A room that cannot open is forgotten: the next join tries again.
                    state.withLock { state in
                        if case .opening(let task)? = state.rooms[room], task == opening { state.rooms[room] = nil }
                    }
                    throw error
                }
                settle(room, opened: hub, by: opening)
            }
        }
    }

    /// Marks `room` open with `hub` (when the opening that made it is still the room's), and starts its
    /// ticks and its watch for being empty.
    private func settle(_ room: String, opened hub: LiveHub<Service>, by opening: Task<LiveHub<Service>, any Error>) {
        let lateClose = state.withLock { state -> Bool in
            guard case .opening(let task)? = state.rooms[room], task == opening else { return false }
            guard !state.closed else { return true }
            let ticking = Task { await hub.run() }
            state.rooms[room] = .open(hub, ticking: ticking, idle: nil)
            // Weak: the hub keeps this closure, and a closed room's hub must be let go.
            hub.shared.setOnEmpty { [weak self, weak hub] in
                if let self, let hub { self.emptied(room, hub: hub) }
            }
            return false
        }
        if lateClose {
            Task { [observer] in
                await hub.close()
                observer?.record(.roomClosed(room: room))
            }
        }
    }

    /// `hub`'s room lost its last connection: schedules its idle close. (A room gains connections only
    /// through ``connect(to:transport:)``, which cancels that close under the rooms' lock.)
    private func emptied(_ room: String, hub: LiveHub<Service>) {
        state.withLock { state in
            guard case .open(let current, let ticking, nil)? = state.rooms[room], current === hub else { return }
            state.rooms[room] = .open(hub, ticking: ticking, idle: idleClose(room, hub))
        }
    }

    /// A task that closes `room` after ``idleTimeout`` if it is still empty then.
    private func idleClose(_ room: String, _ hub: LiveHub<Service>) -> Task<Void, Never> {
        Task { [weak self, idleTimeout] in
            try? await Task.sleep(for: idleTimeout)
            guard !Task.isCancelled else { return }
            self?.closeIfIdle(room, hub)
        }
    }

    private func closeIfIdle(_ room: String, _ hub: LiveHub<Service>) {
        state.withLock { state in
            guard case .open(let current, let ticking, _)? = state.rooms[room], current === hub else { return }
            guard hub.shared.connections.isEmpty else {
                // Joined by a connection made on the hub itself: the next time it empties, the watch starts again.
                state.rooms[room] = .open(hub, ticking: ticking, idle: nil)
                return
            }
            // The task's end takes this lock: it cannot find the room before it is marked closing.
            let closing = Task { [weak self] in
                await hub.close()
                ticking.cancel()
                self?.closed(room)
            }
            state.rooms[room] = .closing(closing)
        }
    }

    private func closed(_ room: String) {
        state.withLock { state in
            if case .closing? = state.rooms[room] { state.rooms[room] = nil }
        }
        observer?.record(.roomClosed(room: room))
    }
}
