import Foundation
import LiveServerCore
import Logging
import Prometheus
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

/// `/metrics`, `/healthz`, `/readyz`, and the logs as JSON lines.
@Suite("Operations: metrics, health, readiness and JSON logs")
struct OperationsTests {
    /// Teams alpha and beta on logs in memory, each hub told to `observer` under its team's name.
    func observedHubs(_ observer: any LiveObserver) async throws -> [String: LiveHub<BoardService>] {
        let access = LiveTokenTable(tokens: seededTokens)
        var hubs: [String: LiveHub<BoardService>] = [:]
        for team in ["alpha", "beta"] {
            hubs[team] = try await LiveHub.open(
                BoardService(team: team, access: access), log: MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(),
                initial: DataFolder.newBoard(named: team), options: ServerOptions().liveOptions(team: team, observer: observer))
        }
        return hubs
    }

    @Test("/metrics shows the documented metrics after a client sent commands; /healthz and /readyz answer; a failed log makes /readyz 503 until it writes again")
    func endpoints() async throws {
        let registry = PrometheusCollectorRegistry()
        let readiness = BoardReadiness()
        let observer = BoardTelemetry.observer(readiness: readiness, metricsFactory: PrometheusMetricsFactory(registry: registry))
        let operations = BoardOperations(registry: registry, readiness: readiness)
        try await withServer(hubs: try await observedHubs(observer), operations: operations) { _, port in
            #expect(try await httpGet(port: port, path: "/healthz") == (200, "ok\n"))
            #expect(try await httpGet(port: port, path: "/readyz") == (200, "ready\n"))

            let client = RawClient(port: port, first: [helloFrame(token: seededTokens["alpha"])])
            try await client.wait(for: "the snapshot") { $0.count >= 2 }
            #expect(try await client.perform(.add(text: "milk"))["type"] as? String == "ack")
            #expect(try await client.perform(.toggle(id: "no-such-item"))["type"] as? String == "error")

            let metrics = try await httpGet(port: port, path: "/metrics")
            #expect(metrics.status == 200)
            // Each sample line is `name{labels} value`: read into a table (a gauge's value is written 1.0).
            let samples = Dictionary(metrics.body.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line -> (String, Double)? in
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { return nil }
                return (String(line[..<space]), value)
            }, uniquingKeysWith: { first, _ in first })
            let expected: [String: Double] = [
                #"stillwater_live_commands_total{outcome="applied"}"#: 1, #"stillwater_live_commands_total{outcome="rejected"}"#: 1,
                #"stillwater_live_commands_total{outcome="unavailable"}"#: 0, "stillwater_live_connections": 1,
                "stillwater_live_connections_opened_total": 1, #"stillwater_live_view_frames_total{kind="snapshot"}"#: 1,
                "stillwater_live_ack_seconds_count": 2, "stillwater_live_append_seconds_count": 1,
                #"stillwater_live_snapshots_total{result="failed"}"#: 0, "stillwater_live_slow_client_closes_total": 0,
            ]
            for (name, value) in expected {
                #expect(samples[name] == value, "\(name) in \(metrics.body)")
            }
            for name in ["stillwater_live_connections_closed_total", "stillwater_live_decide_seconds", "stillwater_live_view_bytes_total",
                         "stillwater_live_snapshot_seconds", "stillwater_live_log_failures_total", "stillwater_live_rooms_open",
                         "stillwater_live_room_open_seconds", "stillwater_live_room_open_failures_total",
                         "stillwater_live_presence_exchange_failures_total"] {
                #expect(metrics.body.contains("# TYPE \(name) "), "\(name)")
            }

            // alpha's log failed: not ready, saying which board and why, until alpha's log writes again.
            readiness.record(.logFailed(room: "alpha", operation: .append, error: "No space left on device"))
            #expect(try await httpGet(port: port, path: "/readyz") == (503, "board alpha: its log failed (append): No space left on device\n"))
            #expect(try await httpGet(port: port, path: "/healthz").status == 200)
            #expect(try await client.perform(.add(text: "eggs"))["type"] as? String == "ack")
            #expect(try await httpGet(port: port, path: "/readyz").status == 200)
            await client.close()
        }
    }

    @Test("readiness in a cluster: a database that fails or does not answer in time is named")
    func database() async {
        struct Refused: Error, CustomStringConvertible { var description: String { "connection refused" } }
        #expect(await BoardReadiness(database: {}).check() == nil)
        let refused = await BoardReadiness(database: { throw Refused() }).check()
        #expect(refused?.hasPrefix("the database cannot be reached: ") == true)
        let slow = await BoardReadiness(database: { try await Task.sleep(for: .seconds(30)) }, timeout: .milliseconds(50)).check()
        #expect(slow == "the database did not answer within 0.05 seconds")
    }

    @Test("JSON lines: one object per message, with the metadata, even with quotes and newlines in it")
    func jsonLines() throws {
        let lines = Locked<[String]>([])
        let logger = Logger(label: "board") { label in
            JSONLinesLogHandler(label: label, level: .debug) { line in lines.withLock { $0.append(line) } }
        }
        logger.info("two\nlines \"quoted\"", metadata: ["live.room": "alpha", "live.connection": "7", "list": ["a", "b"]])
        logger.debug("plain")
        logger.trace("below the level")
        let written = lines.withLock { $0 }
        #expect(written.count == 2)
        #expect(written.allSatisfy { $0.hasSuffix("}\n") && $0.dropLast().firstIndex(of: "\n") == nil })
        let first = try #require(try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: Any])
        #expect(first["message"] as? String == "two\nlines \"quoted\"")
        #expect(first["level"] as? String == "info" && first["label"] as? String == "board")
        #expect(first["live.room"] as? String == "alpha" && first["list"] as? [String] == ["a", "b"])
        #expect((first["time"] as? String)?.hasSuffix("Z") == true)
    }

    @Test("live-server --log-format json: every line of standard error is one JSON object; standard output stays plain")
    func jsonProcess() async throws {
        try await withDataFolder { folder in
            let server = try ServerProcess(["--port", "0", "--data", folder, "--team", "alpha=\(ProcessTests.token)"],
                                           environment: ["LIVE_LOG_FORMAT": "json", "LIVE_LOG_LEVEL": "debug"])
            defer { server.stop() }
            let port = try await server.port()
            let refused = RawClient(port: port, first: [helloFrame(token: "a-wrong-token-for-this-test")])
            _ = try await refused.closedLog()
            let client = RawClient(port: port, first: [helloFrame(token: ProcessTests.token)])
            try await client.wait(for: "the snapshot") { $0.count >= 2 }
            #expect(try await client.perform(.add(text: "milk"))["type"] as? String == "ack")
            await client.close()
            server.send(SIGTERM)
            #expect(try await server.exit(within: 30).status == 0)
            let lines = server.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            #expect(server.stderr.hasSuffix("\n") && lines.count >= 4, "\(server.stderr)")
            var messages: [String] = []
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                #expect(object["time"] is String && object["level"] is String && object["label"] is String)
                messages.append(object["message"] as? String ?? "")
                if object["message"] as? String == "connection opened" { #expect(object["live.room"] as? String == "alpha") }
            }
            #expect(messages.contains { $0.contains("a token was refused") }, "\(messages)")
            #expect(messages.contains("connection opened") && messages.contains("connection closed"), "\(messages)")
            #expect(server.stdout.contains("live-server: listening on"))
        }
    }

    @Test("--log-format and --log-level, also from the environment; a bad value is one clear error")
    func options() throws {
        #expect(try ServerOptions.parse([]).logFormat == .text)
        #expect(try ServerOptions.parse(["--log-format", "json"]).logFormat == .json)
        #expect(try ServerOptions.parse([], environment: ["LIVE_LOG_FORMAT": "json"]).logFormat == .json)
        #expect(try ServerOptions.parse(["--log-format", "text"], environment: ["LIVE_LOG_FORMAT": "json"]).logFormat == .text)
        #expect(try ServerOptions.parse(["--log-level", "debug"]).logLevel == .debug)
        #expect(throws: UsageError("--log-format must be text or json (got \"xml\")")) { try ServerOptions.parse(["--log-format", "xml"]) }
        #expect(throws: UsageError("LIVE_LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical (got \"loud\")")) {
            try ServerOptions.parse([], environment: ["LIVE_LOG_LEVEL": "loud"])
        }
    }
}
