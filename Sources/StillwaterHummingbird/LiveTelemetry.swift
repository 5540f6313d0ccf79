#if Hummingbird
import CoreMetrics
import Logging
import Metrics
import StillwaterLive
import Tracing

/// A ``LiveObserver`` that speaks the server ecosystem's APIs: each ``LiveEvent`` becomes a log line
/// (swift-log), counts and timings (swift-metrics) and, for each command, a span with its steps
/// (swift-distributed-tracing). The application picks the backends (a Prometheus registry, an
/// OpenTelemetry exporter) by bootstrapping those packages; this type depends only on their APIs.
///
/// ```swift
/// var options = LiveOptions()
/// options.observer = LiveTelemetry(logger: Logger(label: "board"))
/// let hub = try await LiveHub.open(service, log: journal, initial: Board(), options: options)
/// ```
///
/// **Logs** go to `logger` with the metadata `live.room`, `live.connection`, `live.identity` (only what
/// `LiveService.observedIdentity(of:)` tells), `live.client`, `live.seq`, `live.outcome` and
/// `live.code`: a failure of the log or a snapshot at `error`, a failed presence exchange at `warning`,
/// a client closed for reading too slowly (4429) at `notice`, rooms opening and closing at `info`,
/// connections and refused commands at `debug`, every command at `trace`.
///
/// **Metrics** (their names start with `prefix`, `stillwater_live` by default):
///
/// | Name | Type | Labels | Meaning |
/// |---|---|---|---|
/// | `_connections` | meter (gauge) | | Connections open now. |
/// | `_connections_opened_total` | counter | | Connections accepted. |
/// | `_connections_closed_total` | counter | `code` | Connections ended, by the close the server sent (`none`: the client or network closed). |
/// | `_slow_client_closes_total` | counter | | Connections closed with 4429: the client read too slowly. |
/// | `_commands_total` | counter | `outcome` | Commands answered: `applied`, `duplicate`, `rejected`, `unavailable`, `out_of_order`, `client_expired`. |
/// | `_ack_seconds` | timer | | From a command's arrival to its answer. |
/// | `_decide_seconds` | timer | | The decisions of a command's batch. |
/// | `_append_seconds` | timer | | The log's append of a command's batch (the fsync or the database's commit). |
/// | `_view_frames_total` | counter | `kind` | Patches and snapshots queued for clients (one per client). |
/// | `_view_bytes_total` | counter | `kind` | Their UTF-8 bytes (each client's copy counted). |
/// | `_snapshots_total` | counter | `result` | Snapshots of the state: `written` or `failed`. |
/// | `_snapshot_seconds` | timer | | How long a snapshot took to write. |
/// | `_log_failures_total` | counter | `operation` | Failures of the log: `append`, `read`, `reopen`, `restart`. |
/// | `_rooms_open` | meter (gauge) | | Rooms open now (``LiveRooms``). |
/// | `_room_open_seconds` | timer | | How long a room took to open (its log read and replayed). |
/// | `_room_open_failures_total` | counter | | Rooms that could not open. |
/// | `_presence_exchange_failures_total` | counter | | Failed rounds of a cluster's presence exchange. |
///
/// Rooms, connections and identities are never labels (10 000 rooms would make 10 000 series): they
/// are in the logs and the spans.
///
/// **Spans**: one `live.command` span per command, from its arrival to its answer, with the children
/// `live.decide`, `live.append`, `live.apply` and `live.ack` for the steps it went through, each with
/// its real start and end (built when the command is answered, from ``LiveCommandTimeline``).
/// Attributes: `live.room`, `live.connection`, `live.outcome`, `live.client`, `live.seq`,
/// `live.batch_size`, `live.decisions`; an outcome other than `applied`, `duplicate` or `rejected`
/// sets the error status.
///
/// - Complexity: Per event, one log call (dropped at once below the logger's level), a few metric
///   updates on handlers made when the telemetry is created, and for a command up to five spans.
public struct LiveTelemetry: LiveObserver {
    /// Where the log lines go.
    public let logger: Logger
    /// The start of every metric's name.
    public let prefix: String
    private let tracer: (any Tracer)?
    private let metrics: Instruments

    /// A telemetry observer.
    ///
    /// - Parameters:
    ///   - logger: The logger of the events (by default one labelled `stillwater.live`).
    ///   - prefix: The start of every metric's name (`stillwater_live`).
    ///   - metricsFactory: Where metrics are made: the one `MetricsSystem.bootstrap` set (the default),
    ///     or another (a test's).
    ///   - tracer: The tracer of the command spans: the one `InstrumentationSystem.bootstrap` set (nil,
    ///     the default, looks it up at each command), or another (a test's).
    public init(
        logger: Logger = Logger(label: "stillwater.live"), prefix: String = "stillwater_live",
        metricsFactory: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil
    ) {
        self.logger = logger
        self.prefix = prefix
        self.tracer = tracer
        metrics = Instruments(prefix: prefix, factory: metricsFactory ?? MetricsSystem.factory)
    }

    /// Logs, counts and (for a command) traces `event`, as the type's documentation lists. Called by the
    /// hub outside its locks; safe from several tasks at once (the metric handlers and loggers are).
    public func record(_ event: LiveEvent) {
        switch event {
        case .connectionOpened(let info):
            metrics.connections.increment()
            metrics.opened.increment()
            logger.debug("connection opened", metadata: Self.metadata(info))
        case .connectionAdmitted(let info):
            logger.debug("connection admitted", metadata: Self.metadata(info))
        case .connectionClosed(let info, let code, let duration):
            metrics.connections.decrement()
            metrics.closed[code?.rawValue ?? 0]?.increment()
            var metadata = Self.metadata(info)
            metadata["live.code"] = "\(code.map { String($0.rawValue) } ?? "none")"
            metadata["live.seconds"] = "\(Self.seconds(duration))"
            if code == .tooSlow {
                metrics.slowClients.increment()
                logger.notice("connection closed: the client read too slowly", metadata: metadata)
            } else {
                logger.debug("connection closed", metadata: metadata)
            }
        case .command(let report):
            record(report)
        case .viewFrame(let room, let kind, let bytes, let connections):
            metrics.frames[kind]?.increment(by: connections)
            metrics.bytes[kind]?.increment(by: bytes * connections)
            logger.trace("view frame queued", metadata: [
                "live.room": "\(room ?? "")", "live.kind": "\(kind.rawValue)", "live.bytes": "\(bytes)",
                "live.connections": "\(connections)",
            ])
        case .snapshotWritten(let room, let version, let duration):
            metrics.snapshots[true]?.increment()
            metrics.snapshotTime.record(duration)
            logger.debug("snapshot written", metadata: ["live.room": "\(room ?? "")", "live.version": "\(version)"])
        case .snapshotFailed(let room, let version, let error):
            metrics.snapshots[false]?.increment()
            logger.error("snapshot failed", metadata: [
                "live.room": "\(room ?? "")", "live.version": "\(version)", "live.error": "\(error)",
            ])
        case .logFailed(let room, let operation, let error):
            metrics.logFailures[operation]?.increment()
            logger.error("the log failed", metadata: [
                "live.room": "\(room ?? "")", "live.operation": "\(operation.rawValue)", "live.error": "\(error)",
            ])
        case .roomOpened(let room, let duration):
            metrics.rooms.increment()
            metrics.roomOpenTime.record(duration)
            logger.info("room opened", metadata: ["live.room": "\(room)", "live.seconds": "\(Self.seconds(duration))"])
        case .roomOpenFailed(let room, let error):
            metrics.roomOpenFailures.increment()
            logger.error("room could not open", metadata: ["live.room": "\(room)", "live.error": "\(error)"])
        case .roomClosed(let room):
            metrics.rooms.decrement()
            logger.info("room closed", metadata: ["live.room": "\(room)"])
        case .presenceExchangeFailed(let room, let node, let error):
            metrics.presenceFailures.increment()
            logger.warning("presence exchange failed", metadata: [
                "live.room": "\(room)", "live.node": "\(node)", "live.error": "\(error)",
            ])
        }
    }

    private func record(_ report: LiveCommandReport) {
        let outcome = report.outcomeName
        let timeline = report.timeline
        metrics.commands[outcome]?.increment()
        metrics.ack.record(timeline.ackLatency)
        if let decide = timeline.decideTime { metrics.decide.record(decide) }
        if let append = timeline.appendTime { metrics.append.record(append) }
        var metadata: Logger.Metadata = ["live.outcome": "\(outcome)"]
        if let room = report.room { metadata["live.room"] = "\(room)" }
        if let connection = report.connection { metadata["live.connection"] = "\(connection)" }
        if let identity = report.identity { metadata["live.identity"] = "\(identity)" }
        if let client = report.client { metadata["live.client"] = "\(client)" }
        if let seq = report.seq { metadata["live.seq"] = "\(seq)" }
        switch report.outcome {
        case .applied, .duplicate:
            logger.trace("command answered", metadata: metadata)
        case .rejected(let message), .unavailable(let message), .clientExpired(let message):
            metadata["live.message"] = "\(message)"
            logger.debug("command not applied", metadata: metadata)
        case .outOfOrder(let expected):
            metadata["live.expected"] = "\(expected)"
            logger.debug("command not applied", metadata: metadata)
        }
        LiveCommandSpans.emit(report, tracer: tracer ?? InstrumentationSystem.tracer)
    }

    private static func metadata(_ info: LiveConnectionInfo) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["live.connection": "\(info.connection)"]
        if let room = info.room { metadata["live.room"] = "\(room)" }
        if let identity = info.identity { metadata["live.identity"] = "\(identity)" }
        return metadata
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The metric handlers of a ``LiveTelemetry``, made once (every label value is known in advance).
private struct Instruments: Sendable {
    let connections: Meter
    let opened: Counter
    /// By close code (0: none sent).
    let closed: [Int: Counter]
    let slowClients: Counter
    let commands: [String: Counter]
    let ack: CoreMetrics.Timer
    let decide: CoreMetrics.Timer
    let append: CoreMetrics.Timer
    let frames: [LiveViewFrameKind: Counter]
    let bytes: [LiveViewFrameKind: Counter]
    /// By result (true: written).
    let snapshots: [Bool: Counter]
    let snapshotTime: CoreMetrics.Timer
    let logFailures: [LiveLogOperation: Counter]
    let rooms: Meter
    let roomOpenTime: CoreMetrics.Timer
    let roomOpenFailures: Counter
    let presenceFailures: Counter

    init(prefix: String, factory: any MetricsFactory) {
        func counter(_ name: String, _ dimensions: [(String, String)] = []) -> Counter {
            Counter(label: "\(prefix)_\(name)", dimensions: dimensions, factory: factory)
        }
        func timer(_ name: String) -> CoreMetrics.Timer {
            CoreMetrics.Timer(label: "\(prefix)_\(name)", dimensions: [], preferredDisplayUnit: .seconds, factory: factory)
        }
        connections = Meter(label: "\(prefix)_connections", dimensions: [], factory: factory)
        opened = counter("connections_opened_total")
        var closed: [Int: Counter] = [0: counter("connections_closed_total", [("code", "none")])]
        for code in LiveCloseCode.allCases {
            closed[code.rawValue] = counter("connections_closed_total", [("code", String(code.rawValue))])
        }
        self.closed = closed
        slowClients = counter("slow_client_closes_total")
        let outcomes = ["applied", "duplicate", "rejected", "unavailable", "out_of_order", "client_expired"]
        commands = Dictionary(uniqueKeysWithValues: outcomes.map { ($0, counter("commands_total", [("outcome", $0)])) })
        ack = timer("ack_seconds")
        decide = timer("decide_seconds")
        append = timer("append_seconds")
        frames = Dictionary(uniqueKeysWithValues: LiveViewFrameKind.allCases.map {
            ($0, counter("view_frames_total", [("kind", $0.rawValue)]))
        })
        bytes = Dictionary(uniqueKeysWithValues: LiveViewFrameKind.allCases.map {
            ($0, counter("view_bytes_total", [("kind", $0.rawValue)]))
        })
        snapshots = [true: counter("snapshots_total", [("result", "written")]), false: counter("snapshots_total", [("result", "failed")])]
        snapshotTime = timer("snapshot_seconds")
        logFailures = Dictionary(uniqueKeysWithValues: LiveLogOperation.allCases.map {
            ($0, counter("log_failures_total", [("operation", $0.rawValue)]))
        })
        rooms = Meter(label: "\(prefix)_rooms_open", dimensions: [], factory: factory)
        roomOpenTime = timer("room_open_seconds")
        roomOpenFailures = counter("room_open_failures_total")
        presenceFailures = counter("presence_exchange_failures_total")
    }
}

/// A command's spans, built after the fact from its timeline.
enum LiveCommandSpans {
    static func emit(_ report: LiveCommandReport, tracer: any Tracer) {
        let timeline = report.timeline
        // The timeline is on the continuous clock; spans take wall-clock instants. Both are read now, and
        // each instant is placed by its distance from now.
        let wallNow = DefaultTracerClock.now.nanosecondsSinceEpoch
        let now = ContinuousClock.now
        func wall(_ instant: ContinuousClock.Instant) -> DefaultTracerClock.Timestamp {
            let back = instant.duration(to: now).components
            let nanoseconds = back.seconds * 1_000_000_000 + back.attoseconds / 1_000_000_000
            return DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: wallNow &- UInt64(max(0, nanoseconds)))
        }
        let root = tracer.startSpan("live.command", context: .topLevel, ofKind: .server, at: wall(timeline.received))
        root.attributes["live.outcome"] = report.outcomeName
        if let room = report.room { root.attributes["live.room"] = room }
        if let connection = report.connection { root.attributes["live.connection"] = Int64(truncatingIfNeeded: connection) }
        if let client = report.client { root.attributes["live.client"] = client.description }
        if let seq = report.seq { root.attributes["live.seq"] = seq }
        root.attributes["live.batch_size"] = timeline.batchSize
        root.attributes["live.decisions"] = timeline.decisions
        func child(_ name: String, from start: ContinuousClock.Instant?, to end: ContinuousClock.Instant?) {
            guard let start, let end else { return }
            let span = tracer.startSpan(name, context: root.context, ofKind: .internal, at: wall(start))
            span.end(at: wall(end))
        }
        child("live.decide", from: timeline.decideStarted, to: timeline.decided)
        child("live.append", from: timeline.appendStarted, to: timeline.appended)
        child("live.apply", from: timeline.appended, to: timeline.applied)
        child("live.ack", from: timeline.applied ?? timeline.decided ?? timeline.received, to: timeline.answered)
        switch report.outcome {
        case .applied, .duplicate, .rejected:
            break
        case .unavailable(let message), .clientExpired(let message):
            root.setStatus(SpanStatus(code: .error, message: message))
        case .outOfOrder(let expected):
            root.setStatus(SpanStatus(code: .error, message: "out of order: expected \(expected)"))
        }
        root.end(at: wall(timeline.answered))
    }
}

extension CoreMetrics.Timer {
    /// Records `duration` in nanoseconds.
    fileprivate func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
#endif
