#if Hummingbird
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import StillwaterLive
import Synchronization

/// One upgraded WebSocket as the endpoint writes to it.
struct EndpointSocket: Sendable {
    let outbound: WebSocketOutboundWriter
    let channel: any Channel
    let closeTimeout: Duration

    /// Writes `frames` as text frames, in order, in one hop to the channel's event loop and with one
    /// flush (so the kernel gets them in one `writev` when the socket can take them); false once the
    /// socket is closed.
    ///
    /// While the socket takes what it is given (NIO holds less than its high-water mark for it), this
    /// returns once the frames are handed to the event loop, with no hop back per batch; otherwise it
    /// returns when the last frame is written to the socket, so that frames a slow client cannot take
    /// wait in its outbox, where the hub bounds them. The event loop runs what is handed to it in order,
    /// so the close, sent through the WebSocket handler after the last batch, follows it.
    ///
    /// Each frame's bytes go into a `ByteBuffer` once per frame, kept with the frame
    /// (`LiveFrame.transportBuffer`): a patch sent to every client is copied once, and each socket adds
    /// only its frame header (NIO's encoder writes it in a buffer of its own when the payload is shared).
    ///
    /// The frames bypass `WebSocketOutboundWriter`, which writes and flushes one frame per call through
    /// the WebSocket handler's actor: they are written to the channel itself, beneath the handler. The
    /// endpoint sets no WebSocket extension, so the handler would pass them to NIO's encoder unchanged.
    func write(_ frames: [LiveFrame]) async -> Bool {
        guard !frames.isEmpty else { return true }
        let channel = channel
        let written = channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            let last = frames.count - 1
            for frame in frames[..<last] {
                channel.write(Self.webSocketFrame(frame), promise: nil)
            }
            return channel.writeAndFlush(Self.webSocketFrame(frames[last]))
        }
        if channel.isWritable && channel.isActive { return true }
        do {
            try await written.get()
            return true
        } catch {
            return false
        }
    }

    /// A text frame of `frame`'s bytes, in the buffer shared by every socket that writes it.
    static func webSocketFrame(_ frame: LiveFrame) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .text, data: frame.transportBuffer { ByteBuffer(string: $0.text) })
    }

    /// Sends the close frame; a client that has not answered it within the close timeout is dropped.
    func close(_ code: LiveCloseCode, reason: String) async {
        try? await outbound.close(WebSocketErrorCode(codeNumber: code.rawValue), reason: reason)
        let channel = channel
        channel.eventLoop.scheduleTask(in: TimeAmount(closeTimeout)) { channel.close(promise: nil) }
    }

    /// Writes everything `session` has to write: its frames, then its close.
    func send<Command, Identity>(_ session: LiveSession<Command, Identity>) async {
        var session = session
        while let write = session.takeBatch() {
            switch write {
            case .frames(let frames):
                guard await self.write(frames) else { return }
            case .close(let code, let reason):
                await close(code, reason: reason)
                return
            }
        }
    }
}

/// Writes a hub connection's frames to its socket on the socket's event loop, as they come: the
/// connection hands it each batch (`LiveConnection.writeWhenReady`), and it writes the batch there with
/// one flush, then takes what came meanwhile (`takeBatch()`), then the close through the WebSocket handler.
///
/// No task waits for frames and nothing hops through the concurrency pool: a batch costs one hop from
/// the thread that queued it (the hub's tick, say) to the event loop. While the socket takes what it is
/// given, nothing waits for a write; once NIO holds more than its high-water mark for the socket, the
/// writer waits for its last write before taking more, so that frames a slow client cannot take wait in
/// the connection's outbox, where the hub bounds them: past the bound the hub ends the session (4429),
/// and the close is sent once the socket takes the writes before it (a client that reads nothing at all
/// stops answering pings, and the WebSocket library drops it).
final class SocketWriter<Live: LiveService>: Sendable {
    private let connection: LiveConnection<Live>
    private let socket: EndpointSocket
    /// Told once the close is sent.
    private let closeSent: @Sendable () -> Void

    /// Starts writing `connection`'s frames to `socket`. The connection holds the writer until nothing
    /// more is to be written; `closeSent` is called after the close is sent.
    static func start(_ connection: LiveConnection<Live>, to socket: EndpointSocket, closeSent: @escaping @Sendable () -> Void) {
        let writer = SocketWriter(connection: connection, socket: socket, closeSent: closeSent)
        connection.writeWhenReady { write in writer.socket.channel.eventLoop.execute { writer.write(write) } }
    }

    private init(connection: LiveConnection<Live>, socket: EndpointSocket, closeSent: @escaping @Sendable () -> Void) {
        self.connection = connection
        self.socket = socket
        self.closeSent = closeSent
    }

    /// On the event loop: writes `first` and every batch that came meanwhile, each with one flush, until
    /// none waits (the next comes through the connection's `writeWhenReady`), the socket is saturated
    /// (the last write's completion takes up again), or the close is sent.
    private func write(_ first: LiveWrite?) {
        let channel = socket.channel
        var next = first
        while let write = next {
            switch write {
            case .frames(let frames):
                guard let last = frames.last else { break }
                guard channel.isActive else {
                    connection.transportClosed()
                    return
                }
                // Written past the high-water mark only for this one batch: the writer then waits for it.
                let saturated = !channel.isWritable
                for frame in frames.dropLast() { channel.write(EndpointSocket.webSocketFrame(frame), promise: nil) }
                guard saturated else {
                    channel.writeAndFlush(EndpointSocket.webSocketFrame(last), promise: nil)
                    break
                }
                channel.writeAndFlush(EndpointSocket.webSocketFrame(last)).whenComplete { result in
                    switch result {
                    case .success: self.write(self.connection.takeBatch())
                    case .failure: self.connection.transportClosed()
                    }
                }
                return
            case .close(let code, let reason):
                let (socket, closeSent) = (socket, closeSent)
                Task {
                    await socket.close(code, reason: reason)
                    closeSent()
                }
                return
            }
            next = connection.takeBatch()
        }
    }
}

/// A socket's hello timer and its handler, which first of them goes on: the timer (it closes the
/// socket, 4408) or the handler (its first frame came).
final class HelloTimeoutClose: Sendable {
    private enum State {
        case pending
        /// The handler went on: the timer does nothing.
        case cancelled
        /// The timer went on: the close it is sending.
        case started(Task<Void, Never>)
    }

    private let state = Mutex(State.pending)

    /// The timer fired: unless the handler went on first, and if `claim` (the socket's claim) succeeds,
    /// starts `send`. Decided under the lock, so that ``cancel()`` either stops it or waits for it.
    func fire(claim: () -> Bool, send: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard case .pending = state, claim() else { return }
            state = .started(Task { await send() })
        }
    }

    /// The handler goes on: from now on the timer starts nothing. Returns once a close the timer
    /// started first is sent.
    func cancel() async {
        let started = state.withLock { state -> Task<Void, Never>? in
            if case .started(let task) = state { return task }
            state = .cancelled
            return nil
        }
        await started?.value
    }
}

/// The upgraded WebSockets of an endpoint, so that its drain closes the ones without a hub yet and waits
/// until every socket has been sent its close.
///
/// A socket is first waiting for its hello; the first of these wins it: its first frame (it gets a
/// hub: ``claim(_:connected:)`` with `true`), its hello timer, or the drain (both send the close
/// themselves).
final class OpenSockets: Sendable {
    private enum Phase {
        case awaitingHello
        case connected
        case closeSent
    }

    private struct Entry {
        var socket: EndpointSocket
        var phase: Phase
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var next = 0
        var closing = false
    }

    private let state = Mutex(State())

    /// Keeps `socket`, waiting for its hello; nil once the drain has begun (close it yourself).
    func open(_ socket: EndpointSocket) -> Int? {
        state.withLock { state in
            guard !state.closing else { return nil }
            state.next += 1
            state.entries[state.next] = Entry(socket: socket, phase: .awaitingHello)
            return state.next
        }
    }

    /// Takes a socket still waiting for its hello: to connect it to a hub (`connected`), or to close it.
    /// False when another already took it.
    func claim(_ id: Int, connected: Bool = false) -> Bool {
        state.withLock { state in
            guard state.entries[id]?.phase == .awaitingHello else { return false }
            state.entries[id]?.phase = connected ? .connected : .closeSent
            return true
        }
    }

    /// The socket's close is sent.
    func closeSent(_ id: Int) {
        state.withLock { $0.entries[id]?.phase = .closeSent }
    }

    /// Forgets the socket: its handler ended.
    func remove(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Begins the drain: no socket is kept from now on, and every socket still waiting for its hello is
    /// taken (returned, to be closed by the caller).
    func closeUnrouted() -> [EndpointSocket] {
        state.withLock { state in
            state.closing = true
            var taken: [EndpointSocket] = []
            for (id, entry) in state.entries where entry.phase == .awaitingHello {
                state.entries[id]?.phase = .closeSent
                taken.append(entry.socket)
            }
            return taken
        }
    }

    /// Returns once every socket kept has been sent its close (or has ended), or `limit` passed.
    func waitUntilClosesSent(within limit: Duration) async {
        let deadline = ContinuousClock.now + limit
        // Polled: this runs once, at shutdown, for at most `limit`.
        while ContinuousClock.now < deadline {
            let open = state.withLock { state in state.entries.values.contains { $0.phase != .closeSent } }
            guard open else { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
#endif
