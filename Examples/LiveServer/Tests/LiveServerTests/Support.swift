import Foundation
import HTTPTypes
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
    let services = ServiceGroup(configuration: .init(services: [app, server.closingService], logger: logger))
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

/// How a test client proves it may use its team's board.
enum ClientAuth: Sendable {
    /// The token in the upgrade's `Authorization: Bearer` header (the team's seeded token when `nil`).
    case header(String? = nil)
    /// The token in a hello frame, sent first.
    case hello(String)
    /// No token at all.
    case none
}

/// A real WebSocket client of the server, keeping a replica of its board.
final class BoardClient: Sendable {
    let log = Locked(ClientLog())
    private let outgoing: AsyncStream<WebSocketOutboundWriter.OutboundFrame>.Continuation
    private let task: Task<Void, Never>
    private let nextRef = Atomic<Int>(0)

    /// Connects to `team`'s board (`nil`: no team in the URL), proving access with `auth`, sending
    /// `origin` as the upgrade's `Origin` header, and resuming from `resume` (a board id and version).
    init(port: Int, team: String?, auth: ClientAuth = .header(), origin: String? = nil, resume: (String, Int)? = nil) {
        let (stream, continuation) = AsyncStream.makeStream(of: WebSocketOutboundWriter.OutboundFrame.self)
        outgoing = continuation
        let log = self.log
        var logger = Logger(label: "test-client")
        logger.logLevel = .error
        var url = "ws://127.0.0.1:\(port)/ws" + (team.map { "?team=\($0)" } ?? "")
        if let (board, version) = resume { url += "&board=\(board)&version=\(version)" }
        var headers = HTTPFields()
        switch auth {
        case .header(let token):
            if let token = token ?? team.flatMap({ LiveServer.seededTokens[$0] }) { headers[.authorization] = "Bearer \(token)" }
        case .hello(let token):
            continuation.yield(.text(#"{"type":"hello","token":"\#(token)"}"#))
        case .none:
            break
        }
        if let origin { headers[.origin] = origin }
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20, additionalHeaders: headers)
        task = Task {
            let close = await connectingResult { try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
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
                            do { try log.replica.apply(frame) } catch { if log.replicaFailure == nil { log.replicaFailure = "\(error) at frame \(log.frames.count): \(text.prefix(300))" } }
                            switch frame {
                            case .ack(let ref, _, _): log.replies[ref] = frame
                            case .error(let message, let ref, _, _):
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
    static func connected(port: Int, team: String, auth: ClientAuth = .header()) async throws -> BoardClient {
        let client = BoardClient(port: port, team: team, auth: auth)
        do {
            try await eventually("the snapshot of \(team)") { client.view != nil }
        } catch {
            let log = client.log.withLock { $0 }
            throw TestFailure("no snapshot of \(team): frames \(log.rawFrames.prefix(3)), failure \(String(describing: log.replicaFailure)), connect \(String(describing: log.connectError)), closed \(log.closed)")
        }
        return client
    }

    /// Sends raw text.
    func send(text: String) { outgoing.yield(.text(text)) }

    /// Sends a binary frame.
    func send(binary: [UInt8]) { outgoing.yield(.binary(.init(bytes: binary))) }

    /// Sends a command with a fresh reference number (and `cid`, when given) and waits for its ack or error.
    @discardableResult
    func perform(_ command: BoardCommand, cid: String? = nil) async throws -> ServerFrame {
        let ref = nextRef.add(1, ordering: .relaxed).newValue
        send(text: ClientFrame(command: command, ref: ref, cid: cid).encoded())
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
func httpGet(port: Int, path: String, headers: [String: String] = [:]) async throws -> (status: Int, body: String) {
    let extra = headers.map { "\($0): \($1)\r\n" }.sorted().joined()
    return try await httpRequest(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\(extra)\r\n")
}

/// Sends `request` (a whole HTTP/1.1 request) on a new loopback connection and reads the answer until
/// the server closes the connection or 10 s pass: the status code and the body.
func httpRequest(port: Int, _ request: String) async throws -> (status: Int, body: String) {
    // On a thread of its own: the blocking reads must not hold one of the few threads tasks run on.
    try await onOwnThread {
        let connection = try RawConnection(port: port)
        let socket = connection.socket
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        /// Whether the headers and as many body bytes as `Content-Length` says have arrived (a kept-alive
        /// connection is not closed by the server after the answer).
        func complete() -> Bool {
            let text = String(decoding: response, as: UTF8.self)
            // A switch to WebSocket has no body to wait for.
            if text.hasPrefix("HTTP/1.1 101 "), text.contains("\r\n\r\n") { return true }
            guard let end = text.range(of: "\r\n\r\n"),
                  let length = text[..<end.lowerBound].split(separator: "\r\n")
                    .first(where: { $0.lowercased().hasPrefix("content-length:") })
                    .flatMap({ Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) })
            else { return false }
            return text[end.upperBound...].utf8.count >= length
        }
        while !complete() {
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
    }
}

/// Runs `body` on a new thread and returns its result: for blocking work a test must not run on the
/// cooperative pool (two threads on a two-core machine).
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
