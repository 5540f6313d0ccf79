import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import StillwaterHummingbird
import StillwaterLive
import StillwaterPostgres
import Synchronization

/// How `live-server` writes its logs (`--log-format`, `LIVE_LOG_FORMAT`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// One human-readable line per event (swift-log's stream handler): the default.
    case text
    /// One JSON object per line (``JSONLinesLogHandler``), for a log collector.
    case json
}

/// What the board serves besides the page and the boards, for the people and machines that run it:
/// `/metrics` (Prometheus' text format), `/healthz` and `/readyz`.
///
/// - `/healthz`: 200 `ok` whenever the process answers HTTP at all (a liveness check: restart it when
///   this fails).
/// - `/readyz`: 200 `ready` when every board's journal writes and, in a cluster, the database answers
///   within 2 s; else 503 with one line saying why (a load balancer's check: send it no clients).
/// - `/metrics`: every metric of `LiveTelemetry` (Docs/RunningInProduction.md lists them) from the
///   registry the process bootstrapped swift-metrics with.
///
/// They answer on the board's own port, without a token: none tells anything about a board's contents
/// or its users (the metrics carry no team, connection or identity). The proxy in `deploy/nginx.conf`
/// keeps them from the public; scrape them on the board's address.
public struct BoardOperations: Sendable {
    /// Where `/metrics` reads from.
    public let registry: PrometheusCollectorRegistry
    /// What `/readyz` asks.
    public let readiness: BoardReadiness

    /// The endpoints of `registry` and `readiness`.
    public init(registry: PrometheusCollectorRegistry, readiness: BoardReadiness) {
        self.registry = registry
        self.readiness = readiness
    }

    /// Adds `/metrics`, `/healthz` and `/readyz` to `router`.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let registry = registry, readiness = readiness
        router.get("/metrics") { _, _ in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        router.get("/healthz") { _, _ in Self.plain(.ok, "ok") }
        router.get("/readyz") { _, _ in
            if let reason = await readiness.check() { return Self.plain(.serviceUnavailable, reason) }
            return Self.plain(.ok, "ready")
        }
    }

    private static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"],
                 body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}

/// Whether the board can take commands now: every board's journal writes, and (in a cluster) the
/// database answers. A ``LiveObserver`` of every board's hub.
///
/// A board whose log failed to append or to reopen (a full disk, a lost database) is not ready until
/// its log writes again (a command recorded, a snapshot written). The database is asked at each check.
public final class BoardReadiness: LiveObserver {
    /// Why each board is not ready, by team.
    private let failures = Mutex<[String: String]>([:])
    private let database: (@Sendable () async throws -> Void)?
    private let timeout: Duration

    /// A readiness check; `database`, when given, is asked at each check and must return within
    /// `timeout` (a cluster's database: a query that touches its tables).
    public init(database: (@Sendable () async throws -> Void)? = nil, timeout: Duration = .seconds(2)) {
        self.database = database
        self.timeout = timeout
    }

    /// Notes the failures and recoveries of the boards' logs.
    public func record(_ event: LiveEvent) {
        switch event {
        case .logFailed(let room, let operation, let error) where operation == .append || operation == .reopen:
            let team = room ?? "?"
            failures.withLock { $0[team] = "board \(team): its log failed (\(operation.rawValue)): \(error)" }
        case .command(let report) where report.timeline.appended != nil:
            if let team = report.room { recovered(team) }
        case .snapshotWritten(let room, _, _):
            if let room { recovered(room) }
        default:
            break
        }
    }

    private func recovered(_ team: String) {
        // Read first: the common case (nothing failed) takes no write.
        failures.withLock { failures in
            if failures[team] != nil { failures[team] = nil }
        }
    }

    /// Nil when ready, else one line saying why not (the first failing board by name, or the database).
    public func check() async -> String? {
        if let failure = failures.withLock({ $0.sorted { $0.key < $1.key }.first?.value }) { return failure }
        guard let database else { return nil }
        let timeout = timeout
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                do {
                    try await database()
                    return nil
                } catch {
                    return "the database cannot be reached: \(PostgresFailure.describe(error))"
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : "the database did not answer within \(timeout)"
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// A swift-log handler that writes each message as one JSON object on one line: `time` (ISO 8601, UTC,
/// milliseconds), `level`, `label`, `message`, then the metadata's keys (handler, logger, then the
/// message's own, later ones winning). Newlines inside values are escaped, so a line is always one
/// message.
public struct JSONLinesLogHandler: LogHandler {
    /// Metadata written with every message of this handler's logger.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    public var logLevel: Logger.Level
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler for the logger `label` at `level`, handing each line (with its newline) to `write`.
    public init(label: String, level: Logger.Level = .info, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        logLevel = level
        self.write = write
    }

    /// A handler that writes to standard error, one `write` per line.
    public static func standardError(label: String, level: Logger.Level) -> JSONLinesLogHandler {
        JSONLinesLogHandler(label: label, level: level) { line in
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// One key of ``metadata``.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` as one JSON line.
    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        var line = "{\"time\":" + JSONText.string(JSONText.timestamp(Date()))
        line += ",\"level\":" + JSONText.string(event.level.rawValue)
        line += ",\"label\":" + JSONText.string(label)
        line += ",\"message\":" + JSONText.string(event.message.description)
        for key in merged.keys.sorted() where !["time", "level", "label", "message"].contains(key) {
            line += "," + JSONText.string(key) + ":" + JSONText.value(merged[key]!)
        }
        write(line + "}\n")
    }
}

/// JSON text for the log handler: strings escaped as RFC 8259 says, metadata values as JSON values.
enum JSONText {
    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func value(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): string(text)
        case .stringConvertible(let convertible): string(convertible.description)
        case .array(let values): "[" + values.map(Self.value).joined(separator: ",") + "]"
        case .dictionary(let entries):
            "{" + entries.keys.sorted().map { string($0) + ":" + Self.value(entries[$0]!) }.joined(separator: ",") + "}"
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC")!))
    }
}

/// The process-wide setup of `live-server`'s logs and metrics, done once at its start.
public enum BoardTelemetry {
    /// Sends swift-log's messages to standard error in `format`, from `level` up, and swift-metrics'
    /// to a new Prometheus registry, which it returns (for `/metrics`). Call once per process.
    public static func bootstrap(format: LogFormat, level: Logger.Level) -> PrometheusCollectorRegistry {
        LoggingSystem.bootstrap { label in
            switch format {
            case .json:
                return JSONLinesLogHandler.standardError(label: label, level: level)
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }

    /// How the program's own lines for standard error are written from the start on: `live-server: LINE`
    /// in the text format (as before there were logs), a `warning` message of the logger `live-server` in
    /// the json format (so every line of standard error is one JSON object).
    public static func lines(format: LogFormat) -> @Sendable (String) -> Void {
        switch format {
        case .text:
            return { line in FileHandle.standardError.write(Data("live-server: \(line)\n".utf8)) }
        case .json:
            let logger = Logger(label: "live-server")
            return { line in logger.warning("\(line)") }
        }
    }

    /// What every board's hub tells: `LiveTelemetry` (logs, metrics and spans) and `readiness`. Its
    /// metrics go to `metricsFactory`, or to the one ``bootstrap(format:level:)`` set when nil.
    public static func observer(readiness: BoardReadiness, metricsFactory: (any MetricsFactory)? = nil) -> any LiveObserver {
        LiveObserverGroup([LiveTelemetry(logger: Logger(label: "live-server"), metricsFactory: metricsFactory), readiness])
    }
}
