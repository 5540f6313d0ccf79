import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import Synchronization

/// The connections that have not sent a whole first request head yet, so a shutdown can close them at
/// once instead of waiting for a request that may never be finished.
public final class QuietConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])
    private let closing = Atomic<Bool>(false)

    /// Creates an empty set.
    public init() {}

    /// How many connections are waiting for their first request head now.
    public var count: Int { channels.withLock { $0.count } }

    func add(_ channel: any Channel) {
        let closeNow = channels.withLock { channels -> Bool in
            if closing.load(ordering: .relaxed) { return true }
            channels[ObjectIdentifier(channel)] = channel
            return false
        }
        if closeNow { channel.close(promise: nil) }
    }

    func remove(_ channel: any Channel) {
        _ = channels.withLock { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Closes every connection that has not sent a whole request head, and every one that connects from
    /// now on.
    public func closeAll() {
        let all = channels.withLock { channels in
            closing.store(true, ordering: .relaxed)
            defer { channels.removeAll() }
            return Array(channels.values)
        }
        for channel in all { channel.close(promise: nil) }
    }
}

/// Closes a connection whose first request head (the request line and headers, up to the blank line)
/// has not arrived within `timeout` of opening: a silent connection, or one that sends its head a byte at
/// a time. Removes itself once the head is complete, after which the HTTP layer's own idle timeout and the
/// WebSocket pings take over.
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

/// The HTTP/1 and WebSocket child channel with a ``FirstRequestTimeout`` in front: the same connection
/// handling, plus a limit on how long a connection may stay silent before its first request.
struct TimedUpgradeChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value

    let inner: HTTP1WebSocketUpgradeChannel
    let timeout: TimeAmount
    let quiet: QuietConnections

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FirstRequestTimeout(timeout: timeout, quiet: quiet))
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
