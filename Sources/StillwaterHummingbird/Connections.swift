#if Hummingbird
import HTTPTypes
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// The connections that have not sent a whole first request head yet, so a shutdown can close them at
/// once instead of waiting for a request that may never come.
final class QuietConnections: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var closing = false
    }

    private let state = Mutex(State())

    /// How many connections are waiting for their first request head now.
    var count: Int { state.withLock { $0.channels.count } }

    func add(_ channel: any Channel) {
        let closeNow = state.withLock { state -> Bool in
            if state.closing { return true }
            state.channels[ObjectIdentifier(channel)] = channel
            return false
        }
        if closeNow { channel.close(promise: nil) }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Closes every connection that has not sent a whole request head, and every one that connects from
    /// now on.
    func closeAll() {
        let all = state.withLock { state in
            state.closing = true
            defer { state.channels.removeAll() }
            return Array(state.channels.values)
        }
        for channel in all { channel.close(promise: nil) }
    }
}

/// Closes a connection whose first request head (the request line and headers, up to the blank line)
/// has not arrived within `timeout` of opening: a silent connection, or one that sends its head a byte at
/// a time. Removes itself once the head is complete; the HTTP idle timeout and the pings take over.
final class FirstRequestTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let timeout: TimeAmount
    private let quiet: QuietConnections
    private var timer: Scheduled<Void>?
    /// The last three bytes read, to find a blank line (`\r\n\r\n`) split across reads.
    private var tail: [UInt8] = []

    init(timeout: TimeAmount, quiet: QuietConnections) {
        self.timeout = timeout
        self.quiet = quiet
    }

    func handlerAdded(context: ChannelHandlerContext) {
        quiet.add(context.channel)
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        quiet.remove(context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let headEnded = unwrapInboundIn(data).withUnsafeReadableBytes { bytes in
            // The head is short and this runs only until it ends, so copying the bytes read is cheap.
            let joined = tail + bytes
            tail = Array(joined.suffix(3))
            return Self.containsBlankLine(joined)
        }
        context.fireChannelRead(data)
        if headEnded {
            timer?.cancel()
            quiet.remove(context.channel)
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
    }

    /// Whether `bytes` hold `\r\n\r\n`.
    static func containsBlankLine(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for start in 0...(bytes.count - 4)
        where bytes[start] == 0x0D && bytes[start + 1] == 0x0A && bytes[start + 2] == 0x0D && bytes[start + 3] == 0x0A {
            return true
        }
        return false
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        quiet.remove(context.channel)
        context.fireChannelInactive()
    }
}

/// The HTTP/1 and WebSocket child channel with a ``FirstRequestTimeout`` in front, whose logger drops
/// the one error a ``Refusal`` makes the WebSocket library log.
struct TimedUpgradeChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    let timeout: TimeAmount
    let quiet: QuietConnections

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            // Reads start at 512 bytes (NIO's default is 2 048), growing as reads fill them: a live
            // client's frames are small, and an idle connection keeps its last read's buffer.
            try channel.syncOptions?.setOption(.recvAllocator, value: Self.readBuffers)
            try channel.pipeline.syncOperations.addHandler(FirstRequestTimeout(timeout: timeout, quiet: quiet))
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    /// How big a read's buffer is: from 64 bytes to 64 KiB, starting at 512 and adapting to the reads.
    static var readBuffers: AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 65_536)
    }

    func handle(value: Value, logger: Logger) async {
        var filtered = logger
        filtered.handler = RefusalLogFilter(base: logger.handler)
        await inner.handle(value: value, logger: filtered)
    }
}

/// The answer to a refused WebSocket upgrade: the status with a one-line reason, then the connection
/// closes.
///
/// The WebSocket library answers an upgrade it is told not to take with an empty `400 Bad Request`,
/// which hides why. So the refusal is written here, on the connection's HTTP/1 encoder, before
/// declining; the connection is closed after it, and the library's own answer then finds it closed and
/// sends nothing (the error it logs for that is dropped by ``RefusalLogFilter``).
enum Refusal {
    static func send(_ status: HTTPResponse.Status, _ reason: String, on channel: any Channel) async throws {
        let body = ByteBuffer(string: reason + "\n")
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase),
            headers: headers)
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
        channel.write(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil)
        try await channel.writeAndFlush(HTTPServerResponsePart.end(nil))
        try? await channel.close()
    }
}

/// A log handler that drops the one error the WebSocket library logs after a ``Refusal`` (its own answer
/// to the declined upgrade finds the connection closed) and passes everything else to `base`.
struct RefusalLogFilter: LogHandler {
    var base: any LogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        if event.message.description == "Error handling upgrade result",
           case .string(let type)? = event.metadata?["error.type"],
           type == "\(ChannelError.inappropriateOperationForState)" {
            return
        }
        base.log(event: event)
    }
}

/// The `Origin` check of a WebSocket upgrade.
///
/// It stops a page from another site, open in the same browser, from using the server through it: a
/// browser names the page's origin in every WebSocket upgrade, and a page cannot change it. An upgrade
/// with no `Origin`, or a `ws://`/`wss://` one (which no browser sends as a page's origin; some client
/// libraries do), comes from a program, not a page: it passes, and still needs its token.
enum LiveOrigins {
    /// Whether an upgrade with this `Origin` may proceed, for a request that named `authority` (its
    /// `Host`): no origin or a `ws://`/`wss://` one, the request's own origin (`http://` or `https://`
    /// and the same host and port), or one of `extra` (lowercase).
    static func allows(_ origin: String?, authority: String?, extra: Set<String>) -> Bool {
        guard let origin else { return true }
        let lowered = origin.lowercased()
        if lowered.hasPrefix("ws://") || lowered.hasPrefix("wss://") || extra.contains(lowered) { return true }
        guard let authority, !authority.isEmpty else { return false }
        let host = authority.lowercased()
        return lowered == "http://" + host || lowered == "https://" + host
    }
}
#endif
