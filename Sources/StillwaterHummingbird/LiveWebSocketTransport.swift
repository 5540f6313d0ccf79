// The WebSocket transport of StillwaterLive's Swift client; built only with the package's `Hummingbird` trait.
#if Hummingbird
import HummingbirdWSClient
import Logging
import NIOWebSocket
import StillwaterLive
import Synchronization

/// A `LiveClientTransport` over a WebSocket: each `connect()` opens a socket to ``url`` with
/// HummingbirdWSClient's `WebSocketClient`, so a `LiveClient` in a command-line program or another
/// server binds to a hub served by StillwaterHummingbird.
///
/// ```swift
/// let transport = LiveWebSocketTransport(url: "ws://localhost:8080/live")
/// let client = LiveClient<BoardView, BoardCommand>(transport: transport, token: "s3cret")
/// ```
///
/// Each text frame from the server is one `LiveTransportEvent.text(_:)`; the server's close frame
/// becomes `LiveTransportEvent.closed(code:reason:)` with its code (a socket that fails has no code).
/// A binary frame from the server is not part of the protocol and is skipped.
public struct LiveWebSocketTransport: LiveClientTransport {
    /// The socket's address (`ws://` or `wss://`).
    public var url: String
    /// The WebSocket client's settings: the longest frame, extra headers (an `Authorization` header for
    /// a server that reads credentials there), pings.
    public var configuration: WebSocketClientConfiguration
    /// Where the WebSocket client logs.
    public var logger: Logger

    /// Creates a transport to `url`.
    public init(url: String, configuration: WebSocketClientConfiguration = .init(),
                logger: Logger = Logger(label: "stillwater.live.client")) {
        self.url = url
        self.configuration = configuration
        self.logger = logger
    }

    /// Opens a socket; returns once the WebSocket upgrade succeeded.
    ///
    /// - Throws: What kept the socket from opening (the address, the network, a refused upgrade).
    public func connect() async throws -> LiveClientChannel {
        let (incoming, sink) = AsyncStream.makeStream(of: LiveTransportEvent.self)
        // The first of "the socket is open" (its writer) and "it failed before opening" answers connect().
        let opening = Opening()
        let maxSize = configuration.maxFrameSize
        let (url, configuration, logger) = (url, configuration, logger)
        let socket = Task {
            do {
                let closeFrame = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
                    inbound, outbound, _ in
                    opening.resolve(.success(outbound))
                    for try await message in inbound.messages(maxSize: maxSize) {
                        if case .text(let text) = message { sink.yield(.text(text)) }
                    }
                }
                let code = closeFrame.map { Int(UInt16(webSocketErrorCode: $0.closeCode)) }
                sink.yield(.closed(code: code, reason: closeFrame?.reason ?? ""))
                opening.resolve(.failure(LiveWebSocketError("the socket closed before it opened")))
            } catch {
                sink.yield(.closed(code: nil, reason: "\(error)"))
                opening.resolve(.failure(error))
            }
            sink.finish()
        }
        let writer: WebSocketOutboundWriter
        do {
            writer = try await opening.value()
        } catch {
            socket.cancel()
            throw error
        }
        return LiveClientChannel(incoming: incoming, send: { text in
            try await writer.write(.text(text))
        }, close: {
            try? await writer.close(.normalClosure, reason: nil)
        })
    }
}

/// Why a ``LiveWebSocketTransport`` could not open a socket, in words.
public struct LiveWebSocketError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// A one-shot answer: the first `resolve` wins and is handed to the one `value()` waiting (or to come).
private final class Opening: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<WebSocketOutboundWriter, any Error>)
        case resolved(Result<WebSocketOutboundWriter, any Error>)
        case done
    }

    private let state = Mutex(State.empty)

    func resolve(_ result: Result<WebSocketOutboundWriter, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<WebSocketOutboundWriter, any Error>? in
            switch state {
            case .empty:
                state = .resolved(result)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .resolved, .done:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> WebSocketOutboundWriter {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<WebSocketOutboundWriter, any Error>? in
                if case .resolved(let result) = state {
                    state = .done
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
#endif
