/// How a ``LiveClient`` reaches its server: something that opens connections carrying JSON text frames.
///
/// The client needs no network of its own. A WebSocket transport (StillwaterHummingbird's
/// `LiveWebSocketTransport`) opens a socket per ``connect()``; ``LiveInProcessTransport`` wires each
/// channel straight to a ``LiveHub``'s ``LiveConnection`` in the same process (for tests). Another
/// transport opens its connection, forwards text frames both ways, and reports the close with its code.
public protocol LiveClientTransport: Sendable {
    /// Opens one connection to the server.
    ///
    /// - Throws: Whatever keeps the connection from opening; the client waits and tries again.
    func connect() async throws -> LiveClientChannel
}

/// One open connection of a ``LiveClientTransport``: the frames that arrive, a way to send one, and a
/// way to close it.
public struct LiveClientChannel: Sendable {
    /// What arrives, in order: text frames, then at most one ``LiveTransportEvent/closed(code:reason:)``.
    /// The stream ends when the connection is closed (an end without `closed` is a close without a code).
    public var incoming: AsyncStream<LiveTransportEvent>
    /// Sends one text frame; throws when the connection can no longer send (the client then treats it
    /// as closed).
    public var send: @Sendable (String) async throws -> Void
    /// Closes the connection; `incoming` ends soon after.
    public var close: @Sendable () async -> Void

    /// Creates a channel from its three parts.
    public init(incoming: AsyncStream<LiveTransportEvent>, send: @escaping @Sendable (String) async throws -> Void,
                close: @escaping @Sendable () async -> Void) {
        self.incoming = incoming
        self.send = send
        self.close = close
    }
}

/// Something that arrived on a ``LiveClientChannel``.
public enum LiveTransportEvent: Sendable, Equatable {
    /// A text frame from the server.
    case text(String)
    /// The connection closed, with the close code the server sent (nil when there was none: the
    /// network failed) and its reason.
    case closed(code: Int?, reason: String)
}
