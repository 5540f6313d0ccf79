import Foundation
import Hummingbird
import HummingbirdWSClient
import HummingbirdWebSocket
import LiveServerCore
import Logging
import NIOWebSocket
import ServiceLifecycle
import Stillwater
import StillwaterLive
import Testing

/// The board's hub served over real WebSockets by ``serveLive(_:inbound:outbound:maxSize:)``.
@Suite("The board's live connection on a WebSocket")
struct LiveSocketTests {
    /// Frames a client sent, in order, then what it received until `done` said enough (or the server
    /// closed), with the close code the server sent.
    static func session(
        port: Int, sending frames: [String], until done: @escaping @Sendable ([[String: Any]]) -> Bool = { _ in false }
    ) async throws -> (received: [[String: Any]], close: WebSocketErrorCode?) {
        let received = Locked<[String]>([])
        var logger = Logger(label: "live-socket-client")
        logger.logLevel = .error
        let close = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/", configuration: .init(), logger: logger) {
            inbound, outbound, _ in
            for frame in frames { try await outbound.write(.text(frame)) }
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message else { continue }
                let all = received.withLock { $0.append(text); return $0 }
                if done(all.map(Self.object)) {
                    try await outbound.close(.normalClosure, reason: nil)
                    break
                }
            }
        }
        return (received.withLock { $0 }.map(Self.object), close?.closeCode)
    }

    static func object(_ text: String) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? ["unreadable": text]
    }

    @Test("a client gets its welcome, snapshot, ack and patch over a socket; a frame over 4 096 bytes is refused; a wrong token is closed with 4401")
    func overASocket() async throws {
        let hub = try await LiveHub.open(
            BoardService(team: "alpha", access: AccessPolicy(tokens: ["alpha": "alpha-secret-token"])),
            log: MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(), initial: Board(title: "Groceries", texts: ["bread"]),
            options: LiveOptions(limits: LiveLimits(maxFrameBytes: Limits.frame)))
        let ticking = Task { await hub.run() }
        var logger = Logger(label: "live-socket-test")
        logger.logLevel = .warning
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: Router(),
            server: .http1WebSocketUpgrade { _, _, _ in
                .upgrade([:]) { inbound, outbound, _ in
                    try await serveLive(hub.connect(), inbound: inbound, outbound: outbound, maxSize: Limits.frameLimit)
                }
            },
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) },
            logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let running = Task { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let hello = #"{"type":"hello","protocol":1,"token":"alpha-secret-token"}"#
        let (frames, _) = try await Self.session(
            port: port,
            sending: [hello, #"{"type":"command","ref":1,"cid":"m1","command":{"add":{"text":"milk"}}}"#]
        ) { frames in frames.contains { $0["type"] as? String == "patch" && $0["version"] as? Int == 1 } }
        let types = frames.compactMap { $0["type"] as? String }
        #expect(types.prefix(2) == ["welcome", "snapshot"], "\(types)")
        #expect(frames.contains { $0["type"] as? String == "ack" && $0["ref"] as? Int == 1 && $0["version"] as? Int == 1 })
        #expect(hub.view.items.map(\.text) == ["bread", "milk"])

        let big = #"{"type":"command","ref":2,"command":{"add":{"text":""# + String(repeating: "x", count: Limits.frame) + #""}}}"#
        let (refused, _) = try await Self.session(port: port, sending: [hello, big]) { frames in
            frames.contains { $0["type"] as? String == "error" }
        }
        #expect(refused.contains { $0["type"] as? String == "error" && $0["code"] as? String == "too_large" }, "\(refused)")
        #expect(hub.version == 1)

        let (unauthorized, close) = try await Self.session(
            port: port, sending: [#"{"type":"hello","protocol":1,"token":"not-the-token"}"#])
        #expect(unauthorized.contains { $0["code"] as? String == "unauthorized" }, "\(unauthorized)")
        #expect(close == WebSocketErrorCode(codeNumber: 4401))

        await services.triggerGracefulShutdown()
        _ = try? await running.value
        ticking.cancel()
        await hub.close()
    }
}
