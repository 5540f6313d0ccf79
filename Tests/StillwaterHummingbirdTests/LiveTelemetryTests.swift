#if Hummingbird
import CoreMetrics
import Foundation
import Logging
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Synchronization
import Testing
import Tracing

// MARK: In-memory backends: what LiveTelemetry handed to swift-log, swift-metrics and the tracer

/// Every message a logger handed to its handler.
final class TestLogSink: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lines = Mutex<[Line]>([])

    var all: [Line] { lines.withLock { $0 } }

    func append(_ line: Line) { lines.withLock { $0.append(line) } }

    /// A logger that logs everything into this sink.
    func logger() -> Logger {
        var logger = Logger(label: "test") { _ in TestLogHandler(sink: self) }
        logger.logLevel = .trace
        return logger
    }
}

struct TestLogHandler: LogHandler {
    let sink: TestLogSink
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        sink.append(.init(level: event.level, message: event.message.description,
                          metadata: merged.mapValues { "\($0)" }))
    }
}

/// Every value recorded, by metric name and labels (`name{label=value,…}`, labels sorted).
final class TestMetrics: MetricsFactory, Sendable {
    /// A handler of any kind: it appends what it is given.
    final class Handler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler, Sendable {
        let values = Mutex<[Double]>([])
        /// The meter's value (a meter is set, or moved up and down).
        let level = Mutex<Double>(0)
        func increment(by amount: Int64) { values.withLock { $0.append(Double(amount)) } }
        func increment(by amount: Double) {
            values.withLock { $0.append(amount) }
            level.withLock { $0 += amount }
        }
        func decrement(by amount: Double) { level.withLock { $0 -= amount } }
        func set(_ value: Int64) { level.withLock { $0 = Double(value) } }
        func set(_ value: Double) { level.withLock { $0 = value } }
        func record(_ value: Int64) { values.withLock { $0.append(Double(value)) } }
        func record(_ value: Double) { values.withLock { $0.append(value) } }
        func recordNanoseconds(_ duration: Int64) { values.withLock { $0.append(Double(duration)) } }
        func reset() { values.withLock { $0 = [] } }
    }

    private let handlers = Mutex<[String: Handler]>([:])

    private func handler(_ label: String, _ dimensions: [(String, String)]) -> Handler {
        let key = Self.key(label, dimensions)
        return handlers.withLock { handlers in
            if let handler = handlers[key] { return handler }
            let handler = Handler()
            handlers[key] = handler
            return handler
        }
    }

    static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        dimensions.isEmpty ? label : label + "{" + dimensions.sorted { $0.0 < $1.0 }.map { "\($0)=\($1)" }.joined(separator: ",") + "}"
    }

    /// Every metric made, by key.
    var names: Set<String> { handlers.withLock { Set($0.keys) } }
    /// The sum of what a counter was given.
    func count(_ key: String) -> Double { handlers.withLock { $0[key] }?.values.withLock { $0.reduce(0, +) } ?? -1 }
    /// Every value a timer or recorder was given.
    func values(_ key: String) -> [Double] { handlers.withLock { $0[key] }?.values.withLock { $0 } ?? [] }
    /// A meter's value now.
    func level(_ key: String) -> Double { handlers.withLock { $0[key] }?.level.withLock { $0 } ?? -1 }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { handler(label, dimensions) }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        handler(label, dimensions)
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { handler(label, dimensions) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        handler(label, dimensions)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { handler(label, dimensions) }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

/// The span a ``TestTracer`` put in the context of the spans it started.
private struct TestSpanKey: InstrumentationContextKey {
    typealias Value = Int
}

/// A tracer that keeps every ended span.
final class TestTracer: Tracer, Sendable {
    struct Ended: Sendable {
        var id: Int
        var parent: Int?
        var name: String
        var start: UInt64
        var end: UInt64
        var attributes: [String: String]
        var status: SpanStatus.Code?
    }

    final class TestSpan: Tracing.Span, Sendable {
        private struct State {
            var name: String
            var attributes = SpanAttributes()
            var status: SpanStatus?
            var ended = false
        }

        let context: InstrumentationContext
        let id: Int
        let parent: Int?
        let start: UInt64
        private let tracer: TestTracer
        private let state: Mutex<State>

        init(tracer: TestTracer, id: Int, parent: Int?, name: String, start: UInt64, context: InstrumentationContext) {
            self.tracer = tracer
            self.id = id
            self.parent = parent
            self.start = start
            self.context = context
            state = Mutex(State(name: name))
        }

        var operationName: String {
            get { state.withLock { $0.name } }
            set { state.withLock { $0.name = newValue } }
        }

        var attributes: SpanAttributes {
            get { state.withLock { $0.attributes } }
            set { state.withLock { $0.attributes = newValue } }
        }

        var isRecording: Bool { state.withLock { !$0.ended } }
        func setStatus(_ status: SpanStatus) { state.withLock { $0.status = status } }
        func addEvent(_ event: SpanEvent) {}
        func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
        func addLink(_ link: SpanLink) {}

        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
            let end = instant().nanosecondsSinceEpoch
            let ended = state.withLock { state -> Ended? in
                guard !state.ended else { return nil }
                state.ended = true
                var attributes: [String: String] = [:]
                state.attributes.forEach { key, value in attributes[key] = TestTracer.text(value) }
                return Ended(id: id, parent: parent, name: state.name, start: start, end: end, attributes: attributes,
                             status: state.status?.code)
            }
            if let ended { tracer.ended.withLock { $0.append(ended) } }
        }
    }

    /// An attribute's value as text (`applied`, `1`).
    static func text(_ attribute: SpanAttribute) -> String {
        switch attribute {
        case .string(let text): text
        case .int64(let number): String(number)
        case .int32(let number): String(number)
        case .bool(let flag): String(flag)
        default: "\(attribute)"
        }
    }

    let ended = Mutex<[Ended]>([])
    private let next = Atomic<Int>(0)

    var spans: [Ended] { ended.withLock { $0 } }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> TestSpan {
        var context = context()
        let parent = context[TestSpanKey.self]
        let id = next.wrappingAdd(1, ordering: .relaxed).newValue
        context[TestSpanKey.self] = id
        return TestSpan(tracer: self, id: id, parent: parent, name: operationName, start: instant().nanosecondsSinceEpoch,
                        context: context)
    }

    func extract<Carrier, Extract>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract: Extractor, Extract.Carrier == Carrier {}

    func inject<Carrier, Inject>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject: Injector, Inject.Carrier == Carrier {}

    func forceFlush() {}
}

// MARK: The tests

@Suite("LiveTelemetry: a session's events as swift-log lines, swift-metrics values and spans")
struct LiveTelemetryTests {
    /// Waits until `condition` holds, at most 5 s.
    func until(_ condition: () -> Bool) async {
        for _ in 0..<1_000 where !condition() { try? await Task.sleep(for: .milliseconds(5)) }
    }

    @Test("a scripted session: connect, commands of each outcome, a slow client closed, a room opened and closed")
    func session() async throws {
        let logs = TestLogSink(), metrics = TestMetrics(), tracer = TestTracer()
        let telemetry = LiveTelemetry(logger: logs.logger(), metricsFactory: metrics, tracer: tracer)
        let journal = MemoryJournal<LiveLogState<Counter>, LiveEntry<Add>>()
        let rooms = LiveRooms<CounterService>(idleTimeout: .milliseconds(20), observer: telemetry) { room in
            var options = LiveOptions(limits: LiveLimits(window: 2, maxQueuedFrames: 10))
            options.observedRoom = nil                      // the rooms name it
            return try await LiveHub.open(CounterService(), log: journal, initial: Counter(), options: options)
        }
        // Connected first: a room entered only for its hub would start its idle close.
        let connection = try await rooms.connect(to: "alpha")
        let hub = try await rooms.hub(for: "alpha")
        #expect(metrics.level("stillwater_live_rooms_open") == 1)
        #expect(metrics.values("stillwater_live_room_open_seconds").count == 1)
        connection.receive(#"{"type":"hello","protocol":1,"token":"\#(CounterService.token)"}"#)
        _ = await connection.nextBatch()
        #expect(metrics.level("stillwater_live_connections") == 1)
        #expect(metrics.count("stillwater_live_connections_opened_total") == 1)
        #expect(metrics.count("stillwater_live_view_frames_total{kind=snapshot}") == 1)
        #expect(metrics.count("stillwater_live_view_bytes_total{kind=snapshot}") > 20)

        // One command of each outcome but client_expired.
        connection.receive(#"{"type":"command","ref":1,"cid":"a","command":5}"#)            // applied
        await hub.settle()
        _ = await connection.nextBatch()
        connection.receive(#"{"type":"command","ref":2,"cid":"a","command":5}"#)            // duplicate
        connection.receive(#"{"type":"command","ref":3,"command":-1}"#)                     // rejected
        await hub.settle()
        _ = await connection.nextBatch()
        journal.failNextSync(with: CocoaError(.fileWriteOutOfSpace))
        #expect(await hub.perform(2, as: "server") == .unavailable("the log could not record the command; try again later"))
        #expect(await hub.perform(1, client: hub.newClient(), seq: 3, as: "server") == .outOfOrder(expected: 1))
        await hub.settle()
        for outcome in ["applied", "duplicate", "rejected", "unavailable", "out_of_order"] {
            #expect(metrics.count("stillwater_live_commands_total{outcome=\(outcome)}") == 1, "\(outcome)")
        }
        #expect(metrics.count("stillwater_live_commands_total{outcome=client_expired}") == 0)
        #expect(metrics.values("stillwater_live_ack_seconds").count == 5)
        #expect(metrics.values("stillwater_live_ack_seconds").allSatisfy { $0 >= 0 })
        // Appended: the applied command, the duplicate in its batch or after it, the failed append not.
        #expect(!metrics.values("stillwater_live_append_seconds").isEmpty)
        #expect(metrics.count("stillwater_live_log_failures_total{operation=append}") == 1)
        #expect(logs.all.contains { $0.level == .error && $0.message == "the log failed" && $0.metadata["live.room"] == "alpha" })
        let rejected = try #require(logs.all.first { $0.metadata["live.outcome"] == "rejected" })
        #expect(rejected.level == .debug && rejected.metadata["live.message"] == "only positive amounts")
        #expect(rejected.metadata["live.room"] == "alpha" && rejected.metadata["live.connection"] != nil)

        // The applied command's spans: the root and its four steps, each inside it, in order.
        let spans = tracer.spans
        let root = try #require(spans.first { $0.name == "live.command" && $0.attributes["live.outcome"] == "applied" })
        #expect(root.parent == nil && root.attributes["live.room"] == "alpha" && root.attributes["live.batch_size"] == "1")
        let children = spans.filter { $0.parent == root.id }
        #expect(children.map(\.name) == ["live.decide", "live.append", "live.apply", "live.ack"])
        #expect(children.allSatisfy { root.start <= $0.start && $0.start <= $0.end && $0.end <= root.end })
        #expect(zip(children, children.dropFirst()).allSatisfy { $0.end <= $1.start })
        // The refused one was decided and answered, never appended; the unavailable one is an error.
        let refused = try #require(spans.first { $0.name == "live.command" && $0.attributes["live.outcome"] == "rejected" })
        #expect(spans.filter { $0.parent == refused.id }.map(\.name) == ["live.decide", "live.ack"])
        #expect(refused.status == nil)
        let failed = try #require(spans.first { $0.name == "live.command" && $0.attributes["live.outcome"] == "unavailable" })
        #expect(failed.status == .error)

        // A client that sends and never reads: closed with 4429.
        for _ in 0..<100 { connection.receive("not json") }
        #expect(await connection.nextBatch() == .close(.tooSlow, reason: "the client read too slowly"))
        await until { metrics.level("stillwater_live_connections") == 0 }
        #expect(metrics.level("stillwater_live_connections") == 0)
        #expect(metrics.count("stillwater_live_connections_closed_total{code=4429}") == 1)
        #expect(metrics.count("stillwater_live_slow_client_closes_total") == 1)
        let slow = try #require(logs.all.first { $0.message == "connection closed: the client read too slowly" })
        #expect(slow.level == .notice && slow.metadata["live.code"] == "4429" && slow.metadata["live.room"] == "alpha")

        // Nobody in the room: it closes once idle.
        await until { metrics.level("stillwater_live_rooms_open") == 0 }
        #expect(metrics.level("stillwater_live_rooms_open") == 0)
        #expect(logs.all.contains { $0.level == .info && $0.message == "room closed" && $0.metadata["live.room"] == "alpha" })
        await rooms.close()

        // Every documented metric exists from the start, with every label value.
        for name in LiveTelemetryTests.documented {
            #expect(metrics.names.contains(name), "\(name)")
        }
    }

    /// The names and labels the documentation lists (LiveTelemetry's comment, the operations article).
    static let documented = [
        "stillwater_live_connections", "stillwater_live_connections_opened_total",
        "stillwater_live_connections_closed_total{code=none}", "stillwater_live_connections_closed_total{code=4429}",
        "stillwater_live_slow_client_closes_total",
        "stillwater_live_commands_total{outcome=applied}", "stillwater_live_commands_total{outcome=client_expired}",
        "stillwater_live_ack_seconds", "stillwater_live_decide_seconds", "stillwater_live_append_seconds",
        "stillwater_live_view_frames_total{kind=patch}", "stillwater_live_view_bytes_total{kind=snapshot}",
        "stillwater_live_snapshots_total{result=written}", "stillwater_live_snapshots_total{result=failed}",
        "stillwater_live_snapshot_seconds", "stillwater_live_log_failures_total{operation=reopen}",
        "stillwater_live_rooms_open", "stillwater_live_room_open_seconds", "stillwater_live_room_open_failures_total",
        "stillwater_live_presence_exchange_failures_total",
    ]

    @Test("snapshot and presence-exchange failures are counted and logged with their words")
    func failures() {
        let logs = TestLogSink(), metrics = TestMetrics()
        let telemetry = LiveTelemetry(logger: logs.logger(), prefix: "board", metricsFactory: metrics, tracer: TestTracer())
        telemetry.record(.snapshotFailed(room: "beta", version: 7, error: "the disk is full"))
        telemetry.record(.presenceExchangeFailed(room: "beta", node: "node-a", error: "connection refused"))
        telemetry.record(.roomOpenFailed(room: "gamma", error: "no room named gamma"))
        #expect(metrics.count("board_snapshots_total{result=failed}") == 1)
        #expect(metrics.count("board_presence_exchange_failures_total") == 1)
        #expect(metrics.count("board_room_open_failures_total") == 1)
        #expect(logs.all.map(\.level) == [.error, .warning, .error])
        #expect(logs.all[0].metadata == ["live.room": "beta", "live.version": "7", "live.error": "the disk is full"])
        #expect(logs.all[1].metadata["live.node"] == "node-a")
    }
}
#endif
