import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import Stillwater
import Synchronization

/// The live board server: a `Store` per team, a WebSocket per client at `/ws?team=TOKEN`, and the page
/// at `/`.
///
/// A client gets a snapshot of its team's view, then one patch frame per change it has not seen. Each
/// connection reads the team's shared view scope through `values(buffering: .newest(1))`: the store
/// hands a new view to the connection's one-slot buffer and moves on, so a client that is slow to read
/// its socket holds at most one pending view (newer views replace it and are counted as superseded) and
/// never slows the store or the other clients. The connection diffs what it sends against what it last
/// sent, so a client that fell behind gets one patch to the newest view. The subscription lives for the
/// connection: it is taken `during` a ``Lifetime`` whose token ends when the socket closes.
public struct LiveServer: Sendable {
    /// The boards, by team token. A token not here is refused.
    public let teams: [String: TeamBoard]
    /// Counters for the whole server.
    public let stats: ServerStats
    /// Whether a client may ask for ``ServerStats`` (`{"type":"stats"}`); off unless the load run asks.
    public let exposesStats: Bool
    /// The least time between two patches to one client (zero: send as soon as the socket takes it).
    /// A longer interval lets more changes fold into each patch: fewer frames, and more actions per
    /// second for the server, at the price of that much more latency.
    public let patchInterval: Duration

    /// Creates a server for these boards.
    public init(teams: [String: Board], exposesStats: Bool = false, patchInterval: Duration = .zero) {
        self.teams = teams.mapValues(TeamBoard.init)
        self.stats = ServerStats()
        self.exposesStats = exposesStats
        self.patchInterval = patchInterval
    }

    /// Two teams with seeded boards: tokens `alpha` and `beta`.
    public static func seeded(exposesStats: Bool = false, patchInterval: Duration = .zero) -> LiveServer {
        LiveServer(teams: [
            "alpha": Board(title: "Team Alpha", texts: ["Write the release notes", "Review the store diff",
                                                       "Fix the flaky test", "Plan the demo"]),
            "beta": Board(title: "Team Beta", texts: ["Order the cake", "Book the room"]),
        ], exposesStats: exposesStats, patchInterval: patchInterval)
    }

    /// The Hummingbird application serving the page and the WebSocket endpoint on `host:port` (port 0
    /// picks a free one); `onRunning` receives the port once the server listens.
    public func application(
        host: String = "127.0.0.1", port: Int, logger: Logger? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.get("/") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: Page.html)))
        }
        router.ws("/ws") { request, _ in
            // A token that names no board is refused before any WebSocket exists: the upgrade fails.
            guard let team = request.uri.queryParameters.get("team"), teams[team] != nil else {
                throw HTTPError(.forbidden, message: "unknown team")
            }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let team = context.request.uri.queryParameters.get("team")
            try await self.serve(team: team, inbound: inbound, outbound: outbound)
        }
        var defaultLogger = Logger(label: "live-server")
        defaultLogger.logLevel = .warning
        return Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: .init(maxFrameSize: Limits.frameLimit))),
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger ?? defaultLogger)
    }

    /// Serves one connection until its socket closes.
    func serve(team: String?, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        guard let team, let board = teams[team] else {
            // Checked at the upgrade already; kept so this function is safe on its own.
            try await outbound.write(.text(ServerFrame.error(message: "unknown team", ref: nil).encoded()))
            try await outbound.close(.policyViolation, reason: "unknown team")
            return
        }
        stats.connections.add(1, ordering: .relaxed)
        defer { stats.connections.subtract(1, ordering: .relaxed) }
        let (lifetime, token) = Lifetime.make()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.push(board, during: lifetime, to: outbound) }
            do {
                try await receive(inbound, for: board, replyingTo: outbound)
            } catch {
                token.end()
                throw error
            }
            // The socket closed: ending the lifetime completes the view stream, which ends the push loop.
            token.end()
            try await group.waitForAll()
        }
    }

    /// Sends the snapshot, then a patch per view the client has not seen, over the socket.
    func push(_ board: TeamBoard, during lifetime: Lifetime, to outbound: WebSocketOutboundWriter) async throws {
        try await push(board, during: lifetime) { text in try await outbound.write(.text(text)) }
    }

    /// Sends the snapshot of `board`'s view, then one patch frame per view the client has not seen, through `send`
    /// (awaited: a slow `send` is a slow client), until `lifetime` ends.
    ///
    /// While `send` is busy, the store keeps going: new views wait in a one-slot buffer, a newer one
    /// replacing an older one (counted in ``ServerStats/superseded``), and the next patch goes from the
    /// last view sent straight to the newest. A view equal to the last one sent sends nothing. Clients that
    /// go from the same version to the same version share one encoded frame (``TeamBoard/frames``).
    public func push(
        _ board: TeamBoard, during lifetime: Lifetime, send: (String) async throws -> Void
    ) async throws {
        let sequence = SequenceNumbers()
        let views = board.view.asObservable()
            .map { view in (sequence.next(), view) }
            .take(during: lifetime)
        var last: (number: Int, view: BoardView)?
        for try await (number, next) in views.values(buffering: .newest(1)) {
            guard let previous = last else {
                last = (number, next)
                try await send(board.frames.snapshot(of: next))
                stats.snapshots.add(1, ordering: .relaxed)
                continue
            }
            last = (number, next)
            stats.superseded.add(number - previous.number - 1, ordering: .relaxed)
            guard let text = board.frames.patch(from: previous.view, to: next) else { continue }
            try await send(text)
            stats.patches.add(1, ordering: .relaxed)
            stats.patchBytes.add(text.utf8.count, ordering: .relaxed)
            stats.wholeStateBytes.add(board.frames.snapshot(of: next).utf8.count, ordering: .relaxed)
            if patchInterval > .zero { try await Task.sleep(for: patchInterval) }
        }
    }

    /// Reads the client's frames: decodes, checks and dispatches each, answering refusals (and frames
    /// with a `ref`) on the same socket.
    func receive(_ inbound: WebSocketInboundStream, for board: TeamBoard, replyingTo outbound: WebSocketOutboundWriter)
        async throws
    {
        for try await message in inbound.messages(maxSize: Limits.frameLimit) {
            guard case .text(let text) = message else {
                stats.rejected.add(1, ordering: .relaxed)
                try await outbound.write(.text(ServerFrame.error(message: "binary frames are not accepted", ref: nil).encoded()))
                continue
            }
            if exposesStats, text == #"{"type":"stats"}"# {
                let data = (try? JSONSerialization.data(withJSONObject: stats.snapshot(), options: [.sortedKeys])) ?? Data()
                try await outbound.write(.text(#"{"type":"stats","stats":"# + String(decoding: data, as: UTF8.self) + "}"))
                continue
            }
            let frame: ClientFrame
            do {
                frame = try ClientFrame.decode(text)
            } catch {
                stats.rejected.add(1, ordering: .relaxed)
                try await outbound.write(.text(ServerFrame.error(message: error.message, ref: nil).encoded()))
                continue
            }
            switch await board.perform(frame.command) {
            case .success(let version):
                stats.accepted.add(1, ordering: .relaxed)
                if let ref = frame.ref {
                    try await outbound.write(.text(ServerFrame.ack(ref: ref, version: version).encoded()))
                }
            case .failure(let rejection):
                stats.rejected.add(1, ordering: .relaxed)
                try await outbound.write(.text(ServerFrame.error(message: rejection.message, ref: frame.ref).encoded()))
            }
        }
    }
}

/// Numbers the views one connection receives, so the views its buffer dropped can be counted.
final class SequenceNumbers: Sendable {
    private let value = Atomic<Int>(0)

    /// 1, 2, 3, …
    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

/// The page served at `/`, read once from the package's resources.
enum Page {
    static let html: String = {
        guard let url = Bundle.module.url(forResource: "index", withExtension: "html", subdirectory: "Public"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else { return "<!doctype html><p>index.html is missing from the LiveServerCore resources</p>" }
        return text
    }()
}
