#if Hummingbird
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import ServiceLifecycle
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Synchronization
import Testing

// MARK: The service the tests serve

struct Counter: Codable, Sendable {
    var count = 0
}

struct Add: Action, Codable, Sendable {
    var amount: Int
    func reduce(_ state: inout Counter) { state.count += amount }
}

struct CounterView: LiveView {
    var count: Int
    static let liveFields: [LiveField<CounterView>] = [.value("count", \.count)]
}

/// A counter: positive amounts only, one token.
struct CounterService: LiveService {
    static let token = "counter-token-for-tests"
    let tokens = LiveTokens([CounterService.token])
    /// Where each handshake's `transport["address"]` is recorded ("none" when it had none), when given.
    var addresses: Locked<[String]>? = nil

    func view(of state: Counter) -> CounterView { CounterView(count: state.count) }

    func decide(_ command: Int, state: Counter, identity: String) -> LiveDecision<Add> {
        command > 0 ? .accept(Add(amount: command)) : .reject("only positive amounts")
    }

    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> {
        addresses?.withLock { $0.append(handshake.transport["address"] ?? "none") }
        return tokens.accepts(handshake.presentedToken) ? .accepted("tester") : .refused("wrong token")
    }
}

typealias CounterEndpoint = LiveEndpoint<CounterService>

func counterHub(_ options: LiveOptions = LiveOptions(), service: CounterService = CounterService()) async throws -> LiveHub<CounterService> {
    try await LiveHub.open(service, log: MemoryJournal<LiveLogState<Counter>, LiveEntry<Add>>(),
                           initial: Counter(), options: options)
}

// MARK: A running server

/// A server running an endpoint on a free loopback port.
struct Served: Sendable {
    let port: Int
    let group: ServiceGroup
    let task: Task<Void, any Error>

    /// Shuts the server down gracefully and waits until it stopped.
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}

/// Serves `live` as a user would, for the length of `body`: its application (the endpoint's routes, and
/// `page` at `/` when given), the endpoint after the application in one service group.
func withServer(_ live: CounterEndpoint, page: String? = nil, _ body: (Served) async throws -> Void) async throws {
    var logger = Logger(label: "stillwater-hummingbird-tests")
    logger.logLevel = .warning
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let app = live.application(page: page, port: 0, logger: logger) { portContinuation.yield($0) }
    let group = ServiceGroup(configuration: .init(services: [app, live], logger: logger))
    let task = Task { try await group.run() }
    var iterator = ports.makeAsyncIterator()
    guard let port = await iterator.next(), port > 0 else { throw TestFailure("the server did not start") }
    let served = Served(port: port, group: group, task: task)
    do {
        try await body(served)
    } catch {
        await served.stop()
        throw error
    }
    await served.stop()
}

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

// MARK: A WebSocket client

/// What a ``LiveTestClient`` received.
struct ClientLog: Sendable {
    var frames: [String] = []
    var closed = false
    var closeCode: WebSocketErrorCode?
    var closedAt: ContinuousClock.Instant?
    var connectError: String?
}

/// A value behind a lock, shared by reference.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// A real WebSocket client (HummingbirdWSClient) that records every text frame it gets.
final class LiveTestClient: Sendable {
    let log = Locked(ClientLog())
    private let outgoing: AsyncStream<String>.Continuation
    private let task: Task<Void, Never>

    /// Connects to `path` on the loopback port, with `headers` on the upgrade, and sends `first` frames.
    init(port: Int, path: String = "/live", headers: HTTPFields = [:], first: [String] = []) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        outgoing = continuation
        for text in first { continuation.yield(text) }
        let log = self.log
        var logger = Logger(label: "test-client")
        logger.logLevel = .critical
        let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20, additionalHeaders: headers)
        task = Task {
            do {
                let close = try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)\(path)", configuration: configuration, logger: logger
                ) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await text in stream { try await outbound.write(.text(text)) }
                            if !Task.isCancelled { try await outbound.close(.normalClosure, reason: nil) }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = message else { continue }
                            log.withLock { $0.frames.append(text) }
                        }
                        group.cancelAll()
                    }
                }
                log.withLock { $0.closeCode = close?.closeCode }
            } catch {
                log.withLock { $0.connectError = "\(error)" }
            }
            log.withLock { log in
                log.closed = true
                log.closedAt = .now
            }
        }
    }

    /// A client that sent its hello (with `token`, `params`) and got its welcome and first view.
    static func admitted(port: Int, token: String = CounterService.token, params: [String: String] = [:]) async throws -> LiveTestClient {
        let client = LiveTestClient(port: port, first: [hello(token: token, params: params)])
        try await eventually("the welcome and the snapshot") { client.frames.count >= 2 || client.closed }
        guard client.frames.count >= 2 else { throw TestFailure("not admitted: \(client.log.withLock { $0 })") }
        return client
    }

    var frames: [String] { log.withLock { $0.frames } }
    var closed: Bool { log.withLock { $0.closed } }
    var closeCode: WebSocketErrorCode? { log.withLock { $0.closeCode } }

    func send(_ text: String) { outgoing.yield(text) }

    /// Closes the socket and waits until the connection ended.
    func close() async {
        outgoing.finish()
        await task.value
    }
}

/// A hello frame.
func hello(token: String?, params: [String: String] = [:]) -> String {
    var object: [String: Any] = ["type": "hello", "protocol": 1, "params": params]
    if let token { object["token"] = token }
    return json(object)
}

func json(_ object: [String: Any]) -> String {
    String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
}

/// A frame's members, or an empty dictionary for a frame that is not a JSON object.
func members(_ frame: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(frame.utf8))) as? [String: Any] ?? [:]
}

func type(of frame: String) -> String? { members(frame)["type"] as? String }

// MARK: Raw HTTP

/// What a raw HTTP exchange got: the status (nil when the server closed without answering), the header
/// fields (names in lowercase), the body, and how long until the answer was complete or the server closed.
struct RawAnswer {
    var status: Int?
    var headers: [String: String]
    var body: String
    var elapsed: Duration
}

/// Sends `request` (nothing when empty) on a new loopback connection and reads until the answer is
/// complete (its head for a `101`, else `Content-Length` bytes of body) or the server closes.
func rawHTTP(port: Int, _ request: String) async throws -> RawAnswer {
    let start = ContinuousClock.now
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    let text = try await channel.executeThenClose { inbound, outbound in
        if !request.isEmpty { try await outbound.write(ByteBuffer(string: request)) }
        var text = ""
        for try await chunk in inbound {
            text += String(buffer: chunk)
            if RawAnswer.isComplete(text) { break }
        }
        return text
    }
    return RawAnswer.parse(text, elapsed: ContinuousClock.now - start)
}

extension RawAnswer {
    static func split(_ text: String) -> (head: [Substring], body: String)? {
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        return (text[..<end.lowerBound].split(separator: "\r\n"), String(text[end.upperBound...]))
    }

    static func headers(_ lines: [Substring]) -> [String: String] {
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    static func isComplete(_ text: String) -> Bool {
        guard let (head, body) = split(text) else { return false }
        if head.first?.hasPrefix("HTTP/1.1 101") == true { return true }
        guard let length = headers(head)["content-length"].flatMap(Int.init) else { return false }
        return body.utf8.count >= length
    }

    static func parse(_ text: String, elapsed: Duration) -> RawAnswer {
        guard let (head, body) = split(text) else { return RawAnswer(status: nil, headers: [:], body: text, elapsed: elapsed) }
        let status = head.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) }
        return RawAnswer(status: status, headers: headers(head), body: body, elapsed: elapsed)
    }
}

/// A WebSocket upgrade request for `path`, with `headers`.
func upgradeRequest(port: Int, path: String = "/live", headers: [String: String] = [:]) -> String {
    var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    text += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
    return text + "\r\n"
}

/// A plain GET of `path` that asks the server to close after answering.
func getRequest(port: Int, path: String, headers: [String: String] = [:]) -> String {
    var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
    return text + "\r\n"
}
#endif
