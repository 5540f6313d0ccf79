import Foundation
import HummingbirdWSClient
import Hummingbird
import LiveServerCore
import Logging
import NIOWebSocket
import ServiceLifecycle
import Synchronization
import Testing

/// A server started on a free loopback port for the length of `body`.
func withServer<R>(
    _ server: LiveServer = .seeded(), _ body: (LiveServer, Int) async throws -> R
) async throws -> R {
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "live-server-test")
    logger.logLevel = .warning
    let app = server.application(port: 0, logger: logger) { port in portContinuation.yield(port) }
    let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
    let task = Task { try await services.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next() else { throw TestFailure("the server did not start") }
    // Shuts the server down gracefully (open connections are closed) and waits until it stopped.
    func stop() async {
        await services.triggerGracefulShutdown()
        _ = try? await task.value
    }
    do {
        let result = try await body(server, port)
        await stop()
        return result
    } catch {
        await stop()
        throw error
    }
}

/// A failure raised by the helpers.
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `seconds` pass.
func eventually(within seconds: Double = 10, _ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out waiting for: \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// What a test client has received.
struct ClientLog: Sendable {
    var replica = BoardReplica()
    var frames: [ServerFrame] = []
    var rawFrames: [String] = []
    var replies: [Int: ServerFrame] = [:]
    var errors: [String] = []
    var replicaFailure: String?
    var closed = false
    var closeCode: WebSocketErrorCode?
    var connectError: String?

    /// How many received frames are of the kind `isKind` accepts.
    func count(_ isKind: (ServerFrame) -> Bool) -> Int { frames.filter(isKind).count }
}

/// A real WebSocket client of the server, keeping a replica of its board.
final class BoardClient: Sendable {
    let log = Locked(ClientLog())
    private let outgoing: AsyncStream<WebSocketOutboundWriter.OutboundFrame>.Continuation
    private let task: Task<Void, Never>
    private let nextRef = Atomic<Int>(0)

    init(port: Int, team: String?) {
        let (stream, continuation) = AsyncStream.makeStream(of: WebSocketOutboundWriter.OutboundFrame.self)
        outgoing = continuation
        let log = self.log
        var logger = Logger(label: "test-client")
        logger.logLevel = .error
        let url = "ws://127.0.0.1:\(port)/ws" + (team.map { "?team=\($0)" } ?? "")
        task = Task {
            let close = await connectingResult { try await WebSocketClient.connect(url: url, logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await frame in stream { try await outbound.write(frame) }
                        // The caller closed the connection (not the server: then the reading ended first and
                        // cancelled this task).
                        if !Task.isCancelled { try await outbound.close(.normalClosure, reason: nil) }
                    }
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message else { continue }
                        log.withLock { log in
                            log.rawFrames.append(text)
                            guard let frame = try? ServerFrame.decode(text) else {
                                log.replicaFailure = "undecodable frame \(text)"
                                return
                            }
                            log.frames.append(frame)
                            do { try log.replica.apply(frame) } catch { log.replicaFailure = "\(error)" }
                            switch frame {
                            case .ack(let ref, _): log.replies[ref] = frame
                            case .error(let message, let ref):
                                log.errors.append(message)
                                if let ref { log.replies[ref] = frame }
                            default: break
                            }
                        }
                    }
                    group.cancelAll()
                }
            } }
            log.withLock { log in
                log.closed = true
                switch close {
                case .success(let frame): log.closeCode = frame?.closeCode
                case .failure(let error): log.connectError = "\(error)"
                }
            }
        }
    }

    /// A client of `team` that has received its snapshot.
    static func connected(port: Int, team: String) async throws -> BoardClient {
        let client = BoardClient(port: port, team: team)
        try await eventually("the snapshot of \(team)") { client.view != nil }
        return client
    }

    /// Sends raw text.
    func send(text: String) { outgoing.yield(.text(text)) }

    /// Sends a binary frame.
    func send(binary: [UInt8]) { outgoing.yield(.binary(.init(bytes: binary))) }

    /// Sends a command with a fresh reference number and waits for its ack or error.
    @discardableResult
    func perform(_ command: BoardCommand) async throws -> ServerFrame {
        let ref = nextRef.add(1, ordering: .relaxed).newValue
        send(text: ClientFrame(command: command, ref: ref).encoded())
        try await eventually("the reply to ref \(ref)") { log.withLock { $0.replies[ref] != nil } }
        return log.withLock { $0.replies[ref]! }
    }

    /// The replica's view now.
    var view: BoardView? { log.withLock { $0.replica.view } }

    /// Closes the socket and waits until the connection ended.
    func close() async {
        outgoing.finish()
        await task.value
    }
}

/// `body`'s result or error.
func connectingResult<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

/// A plain HTTP/1.1 GET on loopback (a socket and a few lines, so the test needs no HTTP client): the
/// status code and the body.
func httpGet(port: Int, path: String) async throws -> (status: Int, body: String) {
    try await Task.detached {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestFailure("socket() failed") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw TestFailure("connect() failed") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: response, as: UTF8.self)
        let statusLine = text.prefix { $0 != "\r" }.split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw TestFailure("no HTTP status in \(text.prefix(80))")
        }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }.value
}
