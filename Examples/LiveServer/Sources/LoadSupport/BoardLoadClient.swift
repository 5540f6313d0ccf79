import Foundation
import HummingbirdWSClient
import LiveServerCore
import Logging
import Synchronization

/// What the clients of a run received after their first snapshot: the frames that moved a replica on
/// (patches, or snapshots when the server sends the whole board), their bytes, the bytes the whole board
/// had at each one's version, and the versions they skipped (folded into a later frame).
public struct FrameCounts: Sendable {
    /// The frames that moved a replica on.
    public var frames = 0
    /// Their bytes (UTF-8 text).
    public var bytes = 0
    /// The bytes of a snapshot of the whole board at each one's version.
    public var wholeBoardBytes = 0
    /// The versions they folded in beyond one each.
    public var skipped = 0

    /// No frames.
    public init() {}

    /// The counts of `lhs` since `rhs` (member by member).
    public static func - (lhs: FrameCounts, rhs: FrameCounts) -> FrameCounts {
        var result = lhs
        result.frames -= rhs.frames; result.bytes -= rhs.bytes
        result.wholeBoardBytes -= rhs.wholeBoardBytes; result.skipped -= rhs.skipped
        return result
    }

    /// The counts of both (member by member).
    public static func + (lhs: FrameCounts, rhs: FrameCounts) -> FrameCounts {
        var result = lhs
        result.frames += rhs.frames; result.bytes += rhs.bytes
        result.wholeBoardBytes += rhs.wholeBoardBytes; result.skipped += rhs.skipped
        return result
    }
}

/// The size of the whole board's snapshot frame at each version, encoded once per version for all the
/// clients of one server.
public final class WholeBoardSizes: Sendable {
    private let sizes = Mutex<[Int: Int]>([:])

    /// No sizes yet.
    public init() {}

    /// The bytes of a snapshot frame of `view` at `version` of `stream`.
    public func size(of view: LiveBoardView, version: Int, stream: String) -> Int {
        if let size = sizes.withLock({ $0[version] }) { return size }
        let envelope = #"{"type":"snapshot","stream":"","version":,"view":}"#.utf8.count + stream.utf8.count + String(version).utf8.count
        let size = envelope + ((try? JSONEncoder().encode(view).count) ?? 0)
        sizes.withLock { $0[version] = size }
        return size
    }
}

/// The answer a load client had to one of its commands.
public struct CommandAnswer: Sendable {
    /// The command's id.
    public var cid: String?
    /// The version of its ack, or `nil` when it was refused.
    public var version: Int?
    /// Whether the ack said "duplicate".
    public var duplicate: Bool
    /// When it was first sent (or due, for a load held to a rate).
    public var sentAt: ContinuousClock.Instant
    /// When its answer came.
    public var answeredAt: ContinuousClock.Instant
}

/// A load client of one team's board on the live protocol: a WebSocket to `/live?team=TEAM`, a hello with
/// the token, a replica kept from the snapshot and the patches, and commands with a `ref` and `cid` each.
///
/// When `reconnects`, a dropped connection is made again to the next node still running (after 100 ms),
/// resuming from the replica's stream and version, and every unanswered command is sent again with its
/// `cid`; so is one answered with an error that says `retry` (after 200 ms). Frames are decoded by a
/// decoder shared by all clients, so a patch sent to a thousand clients is decoded once. Each client is
/// one task (and its connection's writer).
public final class BoardLoadClient: Sendable {
    /// One command sent and not answered yet.
    struct Pending: Sendable {
        var text: String
        var cid: String?
        var sentAt: ContinuousClock.Instant
    }

    /// What the client has: its replica, when it reached each version, its commands and their answers.
    public struct State: Sendable {
        /// The client's copy of the board.
        public var replica = LiveBoardReplica()
        /// When the replica reached each version, in order.
        public var versions: [(version: Int, at: ContinuousClock.Instant)] = []
        /// The answers, by `ref`.
        public var answers: [Int: CommandAnswer] = [:]
        /// Commands refused (an error without `retry`).
        public var refused = 0
        /// Acks that said "duplicate".
        public var duplicates = 0
        /// Errors that said `retry` (the command was sent again).
        public var retries = 0
        /// Connections made again after a drop.
        public var reconnects = 0
        /// Every frame received (each one the server wrote to this client).
        public var framesReceived = 0
        /// The frames that moved the replica on after its first snapshot.
        public var counts = FrameCounts()
        /// The client id the server gave the current connection (its welcome's `client`).
        public var client: String?
        /// Who is connected to the board, by client id, as the `presence` frames said (emptied when the
        /// connection drops).
        public var presence: Set<String> = []
        /// The first thing that went wrong: a frame that did not fit, an error about no command of ours,
        /// or (without reconnecting) a connection that could not be made.
        public var failure: String?
        var pending: [Int: Pending] = [:]
        /// The index of the node the client is (or was last) connected to.
        public internal(set) var node: Int
        var outgoing: AsyncStream<String>.Continuation?

        /// How many commands are sent and not answered.
        public var unanswered: Int { pending.count }
    }

    /// What the client has, read and changed under its lock.
    public let state: Mutex<State>
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let team: String
    private let token: String
    private let reconnects: Bool
    private let decoder: SharedFrameDecoder
    private let sizes: WholeBoardSizes
    private let ports: @Sendable () -> [Int?]
    private let logger: Logger

    /// Connects to node `node` of `ports` (the ports of the nodes, `nil` for one that stopped) at once.
    public init(team: String, token: String, node: Int = 0, reconnects: Bool, decoder: SharedFrameDecoder,
                sizes: WholeBoardSizes, logger: Logger, ports: @escaping @Sendable () -> [Int?]) {
        self.team = team
        self.token = token
        self.reconnects = reconnects
        self.decoder = decoder
        self.sizes = sizes
        self.logger = logger
        self.ports = ports
        state = Mutex(State(node: node))
        task.withLock { $0 = Task { await self.run() } }
    }

    /// The replica's version (`-1` before the first snapshot).
    public var version: Int { state.withLock { $0.replica.version } }
    /// The replica's view (`nil` before the first snapshot).
    public var view: LiveBoardView? { state.withLock { $0.replica.view } }
    /// The first failure: a frame that did not fit, or a connection that could not be made.
    public var failure: String? { state.withLock { $0.failure } }

    /// Sends `command` with `ref` and `cid` (sent again after a reconnect until answered); `sentAt` is
    /// when it counts as sent.
    public func send(_ command: BoardCommand, ref: Int, cid: String?, sentAt: ContinuousClock.Instant = .now) {
        let text = LiveClientText.command(command, ref: ref, cid: cid)
        state.withLock { state in
            state.pending[ref] = Pending(text: text, cid: cid, sentAt: sentAt)
            state.outgoing?.yield(text)
        }
    }

    /// Closes the connection and stops reconnecting.
    public func stop() {
        task.withLock { $0?.cancel() }
        state.withLock { $0.outgoing?.finish() }
    }

    private func run() async {
        repeat {
            let ports = self.ports()
            let node = state.withLock { state -> Int in
                // This node, or the next one still running.
                for step in 0..<ports.count where ports[(state.node + step) % ports.count] != nil {
                    state.node = (state.node + step) % ports.count
                    break
                }
                return state.node
            }
            guard node < ports.count, let port = ports[node] else { return }
            do {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/live?team=\(team)",
                    configuration: WebSocketClientConfiguration(maxFrameSize: 1 << 22), logger: logger
                ) { inbound, outbound, _ in
                    let (stream, continuation) = AsyncStream.makeStream(of: String.self)
                    self.state.withLock { state in
                        state.outgoing = continuation
                        let resume = state.replica.stream.map { (stream: $0, version: state.replica.version) }
                        continuation.yield(LiveClientText.hello(token: self.token, team: self.team, resume: resume))
                        // Everything not answered goes again, with its id: the server answers a repeat once.
                        for ref in state.pending.keys.sorted() { continuation.yield(state.pending[ref]!.text) }
                    }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await text in stream { try await outbound.write(.text(text)) }
                            // The caller stopped the client (not the server: then the reading ended first
                            // and cancelled this task).
                            if !Task.isCancelled { try await outbound.close(.normalClosure, reason: nil) }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 22) {
                            guard case .text(let text) = message else { continue }
                            self.receive(text)
                        }
                        group.cancelAll()
                    }
                }
            } catch {
                if !reconnects { state.withLock { $0.failure = $0.failure ?? "connection: \(error)" } }
            }
            state.withLock { state in
                state.outgoing?.finish()
                state.outgoing = nil
                state.client = nil
                state.presence = []
            }
            guard reconnects, !Task.isCancelled else { return }
            state.withLock { state in
                state.reconnects += 1
                state.node += 1
            }
            try? await Task.sleep(for: .milliseconds(100))
        } while !Task.isCancelled
    }

    private func receive(_ text: String) {
        let now = ContinuousClock.now
        let frame: LiveFrame
        do {
            frame = try decoder.decode(text)
        } catch {
            state.withLock { $0.failure = $0.failure ?? "\(error)" }
            return
        }
        var retry: (ref: Int, text: String)?
        // A frame that moves the replica on after its first snapshot is counted; the whole board's size
        // at its version is looked up outside the lock.
        let moved = state.withLock { state -> (view: LiveBoardView, version: Int, stream: String)? in
            state.framesReceived += 1
            let previous = state.replica.version
            do {
                guard try state.replica.apply(frame), let view = state.replica.view, let stream = state.replica.stream else {
                    retry = answer(frame, in: &state, at: now)
                    return nil
                }
                state.versions.append((state.replica.version, now))
                guard previous >= 0 else { return nil }
                state.counts.frames += 1
                state.counts.bytes += text.utf8.count
                state.counts.skipped += max(0, state.replica.version - previous - 1)
                return (view, state.replica.version, stream)
            } catch {
                state.failure = state.failure ?? "\(error)"
                return nil
            }
        }
        if let moved {
            let size = sizes.size(of: moved.view, version: moved.version, stream: moved.stream)
            state.withLock { $0.counts.wholeBoardBytes += size }
        }
        if let (ref, text) = retry {
            // "Try again later": after a pause, with the same id.
            Task {
                try? await Task.sleep(for: .milliseconds(200))
                self.state.withLock { state in
                    if state.pending[ref] != nil { state.outgoing?.yield(text) }
                }
            }
        }
    }

    /// Records an ack or an error; returns the command to send again when the error says `retry`.
    private func answer(_ frame: LiveFrame, in state: inout State, at now: ContinuousClock.Instant) -> (ref: Int, text: String)? {
        switch frame {
        case .ack(let ref?, _, let version, let duplicate):
            guard let command = state.pending.removeValue(forKey: ref) else { return nil }
            if duplicate { state.duplicates += 1 }
            state.answers[ref] = CommandAnswer(cid: command.cid, version: version, duplicate: duplicate,
                                               sentAt: command.sentAt, answeredAt: now)
        case .error(let code, let message, let ref, _, let again):
            guard let ref, let command = state.pending[ref] else {
                // An error about no command of ours: the hello refused, or a frame the server could not read.
                state.failure = state.failure ?? "error \(code): \(message)"
                return nil
            }
            if again {
                state.retries += 1
                return (ref, command.text)
            }
            state.pending[ref] = nil
            state.refused += 1
            state.answers[ref] = CommandAnswer(cid: command.cid, version: nil, duplicate: false,
                                               sentAt: command.sentAt, answeredAt: now)
        case .welcome(_, _, let client):
            state.client = client
        case .presence(let list, let joins, let leaves):
            if let list { state.presence = list }
            state.presence.formUnion(joins)
            state.presence.subtract(leaves)
        case .snapshot, .patch, .ack, .ignored:
            break
        }
        return nil
    }
}
