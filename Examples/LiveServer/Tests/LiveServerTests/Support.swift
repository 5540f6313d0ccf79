import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWSClient
import LiveServerCore
import Logging
import NIOWebSocket
import ServiceLifecycle
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Synchronization
import Testing

/// A value behind a lock, for the tests' shared records.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }
}

/// The tokens of ``seededHubs(options:)``'s teams (known: tests only).
let seededTokens = ["alpha": "alpha-token-for-tests", "beta": "beta-token-for-tests"]

/// The board's hub options with the server's bounds.
func boardOptions(patchInterval: Duration = .milliseconds(10)) -> LiveOptions {
    var options = ServerOptions()
    options.patchInterval = patchInterval
    return options.liveOptions
}

/// Teams alpha and beta, their first boards as a new data folder's, on logs in memory.
func seededHubs(options: LiveOptions = boardOptions()) async throws -> [String: LiveHub<BoardService>] {
    let access = LiveTokenTable(tokens: seededTokens)
    var hubs: [String: LiveHub<BoardService>] = [:]
    for team in ["alpha", "beta"] {
        hubs[team] = try await LiveHub.open(
            BoardService(team: team, access: access), log: MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(),
            initial: DataFolder.newBoard(named: team), options: options)
    }
    return hubs
}

/// A server of `hubs` (the seeded ones when nil) started on a free loopback port for the length of `body`.
func withServer<R>(
    hubs: [String: LiveHub<BoardService>]? = nil, origins: [String] = [],
    firstRequestTimeout: Duration = .seconds(10), helloTimeout: Duration = .seconds(10), operations: BoardOperations? = nil,
    _ body: (BoardServer, Int) async throws -> R
) async throws -> R {
    let opened: [String: LiveHub<BoardService>]
    if let hubs { opened = hubs } else { opened = try await seededHubs() }
    let server = BoardServer(hubs: opened, origins: origins, firstRequestTimeout: firstRequestTimeout, helloTimeout: helloTimeout,
                             operations: operations)
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "live-server-test")
    logger.logLevel = .warning
    let app = server.application(port: 0, logger: logger) { port in portContinuation.yield(port) }
    let services = ServiceGroup(configuration: .init(services: [app, server.endpoint], logger: logger))
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

extension BoardServer {
    /// The hub of `team`.
    func hub(_ team: String) -> LiveHub<BoardService> { endpoint.hub(team)! }
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

/// A hello frame with `token` (none when nil), the board it asks for in `params.team`, and a view to
/// resume from.
func helloFrame(token: String?, team: String? = nil, resume: (stream: String, version: Int)? = nil) -> String {
    var hello: [String: Any] = ["type": "hello", "protocol": 1]
    hello["token"] = token
    if let team { hello["params"] = ["team": team] }
    if let resume { hello["resume"] = ["stream": resume.stream, "version": resume.version] }
    return String(decoding: try! JSONSerialization.data(withJSONObject: hello, options: [.sortedKeys]), as: UTF8.self)
}

/// A command frame with `ref` and, when given, `cid`.
func commandFrame(_ command: BoardCommand, ref: Int, cid: String? = nil) -> String {
    let json = String(decoding: try! JSONEncoder().encode(command), as: UTF8.self)
    return #"{"type":"command","ref":\#(ref),"# + (cid.map { #""cid":"\#($0)","# } ?? "") + #""command":\#(json)}"#
}

/// A frame's JSON object (an `unreadable` member when it is not one).
func object(_ text: String) -> [String: Any] {
    ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? ["unreadable": text]
}

/// What a ``RawClient`` has received.
struct RawLog: Sendable {
    var texts: [String] = []
    var closed = false
    var closeCode: WebSocketErrorCode?
    var connectError: String?
}

/// A WebSocket client that sends and keeps frames as text: for what the library's client hides (error
/// frames, close codes, refusals at the upgrade).
final class RawClient: Sendable {
    let log = Locked(RawLog())
    private let nextRef = Atomic<Int>(0)
    private let outgoing: AsyncStream<WebSocketOutboundWriter.OutboundFrame>.Continuation
    private let task: Task<Void, Never>

    /// Connects to `path`, with `headers` on the upgrade, and sends `first` (a hello, say) once open.
    init(port: Int, path: String = "/live?team=alpha", headers: HTTPFields = [:], first: [String] = []) {
        let (stream, continuation) = AsyncStream.makeStream(of: WebSocketOutboundWriter.OutboundFrame.self)
        outgoing = continuation
        for text in first { continuation.yield(.text(text)) }
        let log = self.log
        var logger = Logger(label: "test-client")
        logger.logLevel = .critical
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20, additionalHeaders: headers)
        task = Task {
            let close = await connectingResult {
                try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)\(path)", configuration: configuration, logger: logger) {
                    inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await frame in stream { try await outbound.write(frame) }
                            // The caller closed the connection (not the server: then the reading ended
                            // first and cancelled this task).
                            if !Task.isCancelled { try await outbound.close(.normalClosure, reason: nil) }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = message else { continue }
                            log.withLock { $0.texts.append(text) }
                        }
                        group.cancelAll()
                    }
                }
            }
            log.withLock { log in
                log.closed = true
                switch close {
                case .success(let frame): log.closeCode = frame?.closeCode
                case .failure(let error): log.connectError = "\(error)"
                }
            }
        }
    }

    /// A client of `team` that said hello with its seeded token.
    convenience init(port: Int, team: String, token: String? = nil) {
        self.init(port: port, path: "/live?team=\(team)", first: [helloFrame(token: token ?? seededTokens[team])])
    }

    /// The frames received so far, as JSON objects.
    var frames: [[String: Any]] { log.withLock { $0.texts }.map(object) }

    /// Waits until `condition` holds for the frames received.
    func wait(within seconds: Double = 10, for what: String, _ condition: ([[String: Any]]) -> Bool) async throws {
        try await eventually(within: seconds, "\(what) (received: \(log.withLock { $0.texts.suffix(3) }))") { condition(frames) }
    }

    /// Waits until the server closed the connection (or it failed) and returns what it received.
    func closedLog(within seconds: Double = 10) async throws -> RawLog {
        try await eventually(within: seconds, "the connection's end") { log.withLock { $0.closed } }
        return log.withLock { $0 }
    }

    /// Sends raw text.
    func send(_ text: String) { outgoing.yield(.text(text)) }

    /// Sends `command` with a new `ref` (and `cid`, when given) and returns its answer: the ack or error
    /// frame with that ref.
    func perform(_ command: BoardCommand, cid: String? = nil, within seconds: Double = 30) async throws -> [String: Any] {
        let ref = nextRef.add(1, ordering: .relaxed).newValue
        send(commandFrame(command, ref: ref, cid: cid))
        var answer: [String: Any]?
        try await eventually(within: seconds, "the answer to ref \(ref)") {
            guard !log.withLock({ $0.closed }) else { return true }
            answer = frames.last { $0["ref"] as? Int == ref && ["ack", "error"].contains($0["type"] as? String) }
            return answer != nil
        }
        guard let answer else { throw TestFailure("the connection closed before the answer to ref \(ref)") }
        return answer
    }

    /// Sends a binary frame.
    func send(binary: [UInt8]) { outgoing.yield(.binary(.init(bytes: binary))) }

    /// Closes the socket and waits until the connection ended.
    func close() async {
        outgoing.finish()
        await task.value
    }
}

/// The frames of `frames` whose `type` is `type`.
func frames(_ frames: [[String: Any]], ofType type: String) -> [[String: Any]] {
    frames.filter { $0["type"] as? String == type }
}

/// A client of the library's Swift client, with `team`'s token and the board it asks for in the hello.
func boardClient(port: Int, team: String = "alpha", token: String? = nil) -> LiveClient<LiveBoardView, BoardCommand> {
    var logger = Logger(label: "test-live-client")
    logger.logLevel = .critical
    return LiveClient(
        transport: LiveWebSocketTransport(url: "ws://127.0.0.1:\(port)/live", logger: logger),
        token: token ?? seededTokens[team], params: ["team": team])
}

/// A client of `team` (with `token`, else the seeded one) with its first view.
func connectedClient(port: Int, team: String = "alpha", token: String? = nil) async throws -> LiveClient<LiveBoardView, BoardCommand> {
    let client = boardClient(port: port, team: team, token: token)
    try await eventually("the first view of \(team) (status \(client.status.value))") { client.view.value != nil }
    return client
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

extension LiveHub where Service == BoardService {
    /// The members' view: what every client saw before the board had viewers, and what the tests of
    /// members' clients compare with.
    var view: LiveBoardView { view(for: .member) }
}

/// Whether `frame` is a `presence` frame (who is on the board).
func isPresence(_ frame: String) -> Bool { frame.hasPrefix(#"{"type":"presence""#) }

/// The frames of `connection`'s next write that has more than `presence` frames, without those, or the
/// close as `close CODE` (`closed` when the connection ended): for the tests of what the board sends,
/// which presence frames (sent whenever someone joins or leaves) would interleave.
func nextFrames(_ connection: LiveConnection<BoardService>) async -> [String] {
    while true {
        switch await connection.nextBatch() {
        case .frames(let frames)?:
            let kept = frames.map(\.text).filter { !isPresence($0) }
            if !kept.isEmpty { return kept }
        case .close(let code, _)?: return ["close \(code.rawValue)"]
        case nil: return ["closed"]
        }
    }
}
