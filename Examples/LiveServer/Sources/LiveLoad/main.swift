import Foundation
import HummingbirdWSClient
import LiveServerCore
import LoadSupport
import Logging
import Synchronization

// live-load --clients 1000 --actions 10000 [--rate N] [--senders 10] [--window 8] [--port N (0: any free one)]
//           [--patch-interval-ms N] [--baseline] [--in-process] [--data DIR] [--snapshot-every N] [--kill-server]
//
// --data DIR gives the server that folder and keeps it afterwards (a journal to restart from);
// --snapshot-every N is passed to the server; --kill-server ends it with SIGKILL (a crash: no closing
// snapshot) instead of SIGTERM.
//
// Starts the server (the `live-server` binary beside this one, so its memory is its own; or in this
// process with --in-process), connects the clients to team `alpha`, lets `senders` of them
// send `actions` commands (at `rate` actions a second in all, or as fast as answers come with --rate 0;
// each sender keeps at most `window` unanswered), waits until every client's replica has the final
// version, checks all replicas are equal to the server's board, and prints the figures. A command's
// latency runs from the moment it was due to be sent (so a sender held back by its window counts the
// wait) to the moment the last client had a version that includes it. --baseline runs the same load a
// second time against the server sending the whole board to every client on every change, and prints
// both rows. Every figure but the server's memory (read from /proc) is counted by the clients from the
// frames they receive. Exit status: 0, 1 when a replica differs or a run times out, 2 for a bad argument.

struct Options {
    var clients = 1_000
    var actions = 10_000
    var senders = 10
    var window = 8
    var port = 0
    var inProcess = false
    var patchIntervalMs = 0
    var rate = 0
    var baseline = false
    var data: String?
    var snapshotEvery: Int?
    var killServer = false
}

var options = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    let value = { () -> Int in
        // Every option takes a whole number; --port 0 (the default) lets the server pick a free port.
        guard let text = arguments.popFirst(), let number = Int(text), number >= 0 else {
            FileHandle.standardError.write(Data("live-load: \(argument) needs a whole number, 0 or more\n".utf8))
            exit(2)
        }
        return number
    }
    switch argument {
    case "--clients": options.clients = value()
    case "--actions": options.actions = value()
    case "--senders": options.senders = value()
    case "--window": options.window = value()
    case "--port": options.port = value()
    case "--in-process": options.inProcess = true
    case "--patch-interval-ms": options.patchIntervalMs = value()
    case "--rate": options.rate = value()
    case "--baseline": options.baseline = true
    case "--data":
        guard let folder = arguments.popFirst(), !folder.isEmpty else {
            FileHandle.standardError.write(Data("live-load: --data needs a folder\n".utf8))
            exit(2)
        }
        options.data = folder
    case "--snapshot-every": options.snapshotEvery = value()
    case "--kill-server": options.killServer = true
    default:
        FileHandle.standardError.write(Data("""
            usage: live-load [--clients N] [--actions N] [--rate N] [--senders N] [--window N] [--port N]
                             [--patch-interval-ms N] [--baseline] [--in-process] [--data DIR]
                             [--snapshot-every N] [--kill-server]

            """.utf8))
        exit(2)
    }
}
guard options.clients > 0, options.actions > 0, options.senders > 0, options.window > 0 else {
    FileHandle.standardError.write(Data("live-load: --clients, --actions, --senders and --window must be at least 1\n".utf8))
    exit(2)
}
options.senders = min(options.senders, options.clients)

raiseOpenFileLimit()

var logger = Logger(label: "live-load")
logger.logLevel = .error

/// What one client received: its replica and, for each frame that changed its version, when.
struct Received: Sendable {
    var replica = BoardReplica()
    var versions: [(version: Int, at: ContinuousClock.Instant)] = []
    var acks: [Int: Int] = [:]  // ref -> version
    var errors = 0
    var failure: String?
    /// The frames that moved the replica on after its first snapshot (patches, or snapshots in the
    /// whole-board baseline), their bytes, the bytes of the whole board at each one's version, and the
    /// versions they skipped (folded into a later frame).
    var counts = FrameCounts()
}

/// What clients received after their first snapshot (see ``Received/counts``).
struct FrameCounts: Sendable {
    var frames = 0
    var bytes = 0
    var wholeBoardBytes = 0
    var skipped = 0

    static func - (lhs: FrameCounts, rhs: FrameCounts) -> FrameCounts {
        FrameCounts(frames: lhs.frames - rhs.frames, bytes: lhs.bytes - rhs.bytes,
                    wholeBoardBytes: lhs.wholeBoardBytes - rhs.wholeBoardBytes, skipped: lhs.skipped - rhs.skipped)
    }

    static func + (lhs: FrameCounts, rhs: FrameCounts) -> FrameCounts {
        FrameCounts(frames: lhs.frames + rhs.frames, bytes: lhs.bytes + rhs.bytes,
                    wholeBoardBytes: lhs.wholeBoardBytes + rhs.wholeBoardBytes, skipped: lhs.skipped + rhs.skipped)
    }
}

/// The size of the whole board's snapshot frame at each version, encoded once per version for all clients
/// (emptied at the start of each run: versions start again with each server).
let wholeBoardSizes = Locked<[Int: Int]>([:])

@Sendable func wholeBoardSize(of view: BoardView, board: String) -> Int {
    if let size = wholeBoardSizes.withLock({ $0[view.version] }) { return size }
    let size = ServerFrame.snapshot(view, board: board).encoded().utf8.count
    wholeBoardSizes.withLock { $0[view.version] = size }
    return size
}

final class LoadClient: Sendable {
    let received = Locked(Received())
    let outgoing: AsyncStream<String>.Continuation
    let task: Task<Void, Never>

    init(port: Int, token: String) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        outgoing = continuation
        let received = self.received
        task = Task {
            do {
                let configuration = WebSocketClientConfiguration(
                    maxFrameSize: 1 << 22, additionalHeaders: [.authorization: "Bearer \(token)"])
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/ws?team=alpha", configuration: configuration, logger: logger
                ) {
                    inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await text in stream { try await outbound.write(.text(text)) }
                            // The caller closed the connection (not the server: then the reading ended first and
                        // cancelled this task).
                        if !Task.isCancelled { try await outbound.close(.normalClosure, reason: nil) }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 22) {
                            guard case .text(let text) = message else { continue }
                            let now = ContinuousClock.now
                            let frame = try ServerFrame.decode(text)
                            // A frame that moves the replica on after its first snapshot is counted; the
                            // whole board's size at its version is looked up outside this client's lock.
                            let moved = received.withLock { state -> (view: BoardView, board: String)? in
                                let previous = state.replica.view?.version
                                do {
                                    try state.replica.apply(frame)
                                } catch {
                                    state.failure = "\(error)"
                                }
                                switch frame {
                                case .snapshot(let view, _): state.versions.append((view.version, now))
                                case .patch(_, let version, _, _): state.versions.append((version, now))
                                case .ack(let ref, let version, _): state.acks[ref] = version
                                case .error(_, let ref, _, _):
                                    state.errors += 1
                                    if let ref { state.acks[ref] = -1 }
                                }
                                guard let previous, let view = state.replica.view, let board = state.replica.board,
                                      view.version > previous else { return nil }
                                state.counts.frames += 1
                                state.counts.bytes += text.utf8.count
                                state.counts.skipped += view.version - previous - 1
                                return (view, board)
                            }
                            if let moved {
                                let size = wholeBoardSize(of: moved.view, board: moved.board)
                                received.withLock { $0.counts.wholeBoardBytes += size }
                            }
                        }
                        group.cancelAll()
                    }
                }
            } catch {
                received.withLock { $0.failure = "connection: \(error)" }
            }
        }
    }

    var version: Int { received.withLock { $0.replica.view?.version ?? -1 } }
}

/// The server process of the run in progress, ended with this program however it ends.
let child = Locked<Process?>(nil)

/// Ends the server child, if any, then this program with `status`.
@Sendable func finish(_ status: Int32) -> Never {
    child.withLock { process in
        if let process, process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
    exit(status)
}

// A SIGTERM or SIGINT (`timeout`, Ctrl-C) ends the server child too, instead of leaving it running.
let signalSources = onTerminationSignals { finish(1) }

func waitUntil(_ what: String, within seconds: Double, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            print("live-load: timed out waiting for \(what)")
            finish(1)
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// The send times of the actions, by reference number.
final class SendTimes: Sendable {
    let value = Locked<[Int: ContinuousClock.Instant]>([:])
}

/// One run's figures, a row of the table.
struct Row {
    var label: String
    var actionsPerSecond: Double
    var patchesPerSecond: Double
    var patchesPerClient: Double
    var bytesPerPatch: Double
    var wholeBoardBytes: Double
    var p50: Double
    var p99: Double
    var max: Double
    var rssMiB: Int
    var equal: Int
    var clients: Int
}

func run(_ options: Options, wholeBoard: Bool) async throws -> Row {
    wholeBoardSizes.withLock { $0 = [:] }
    // The server.
    var serverProcess: Process?
    var inProcessTask: Task<Void, any Error>?
    var port = options.port
    var token = LiveServer.seededTokens["alpha"]!
    var dataDirectory: String?
    if options.inProcess {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let seeded = LiveServer.seeded()
        let server = LiveServer(
            boards: seeded.teams, access: seeded.access,
            patchInterval: .milliseconds(options.patchIntervalMs), sendsWholeBoard: wholeBoard)
        let app = server.application(port: 0) { continuation.yield($0) }
        inProcessTask = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        port = await iterator.next() ?? 0
    } else {
        guard let binary = siblingServer() else { exit(2) }
        // A fresh data folder, removed at the end: the board starts as a new team's, with a new token.
        let folder = options.data ?? FileManager.default.temporaryDirectory.appendingPathComponent("live-load-\(getpid())").path
        dataDirectory = options.data == nil ? folder : nil
        token = AccessPolicy.newToken()
        // With --port 0 (the default) the server picks a port and names it in its "listening on" line.
        guard let (process, number) = try await startServer(binary, arguments: [
            "--port", String(options.port), "--patch-interval-ms", String(options.patchIntervalMs),
            "--data", folder, "--team", "alpha=\(token)"] + (wholeBoard ? ["--send-whole-board"] : [])
            + (options.snapshotEvery.map { ["--snapshot-every", String($0)] } ?? []))
        else {
            print("live-load: the server did not start (see its standard error above)")
            finish(1)
        }
        serverProcess = process
        child.withLock { $0 = process }
        port = number
    }

    print("live-load: \(options.clients) clients, \(options.actions) actions from \(options.senders) senders "
        + "(window \(options.window), \(options.rate > 0 ? "\(options.rate) actions/s" : "as fast as answered")"
        + "\(wholeBoard ? ", whole board on every change" : ", patch interval \(options.patchIntervalMs) ms")), server \(options.inProcess ? "in this process" : "pid \(serverProcess!.processIdentifier)") on port \(port)")

    // Connect (retrying the first one until the server listens).
    var probe = LoadClient(port: port, token: token)
    for _ in 0..<100 where probe.version < 0 {
        try await Task.sleep(for: .milliseconds(100))
        if probe.received.withLock({ $0.failure }) != nil {
            probe.outgoing.finish()
            probe = LoadClient(port: port, token: token)
        }
    }
    var clients = [probe]
    for _ in 1..<options.clients { clients.append(LoadClient(port: port, token: token)) }
    try await waitUntil("every snapshot", within: 60) { clients.allSatisfy { $0.version >= 0 } }
    let startVersion = clients[0].version

    func counts() -> FrameCounts { clients.reduce(FrameCounts()) { $0 + $1.received.withLock { $0.counts } } }
    let before = counts()

    // Send.
    let sendTimes = SendTimes()  // ref (global) -> when sent
    let started = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for sender in 0..<options.senders {
            let client = clients[sender]
            let share = options.actions / options.senders + (sender < options.actions % options.senders ? 1 : 0)
            group.addTask {
                var random = SystemRandomNumberGenerator()
                for index in 0..<share {
                    let ref = index * options.senders + sender + 1
                    // Open loop: the command is due at its slot of the rate, whatever came back so far.
                    var due = ContinuousClock.now
                    if options.rate > 0 {
                        due = started + .seconds(Double(ref - 1) / Double(options.rate))
                        try await Task.sleep(until: due, clock: .continuous)
                    }
                    if index >= options.window {
                        let waitFor = (index - options.window) * options.senders + sender + 1
                        while client.received.withLock({ $0.acks[waitFor] == nil }) { try await Task.sleep(for: .microseconds(200)) }
                    }
                    let items = client.received.withLock { $0.replica.view?.items ?? [] }
                    let command = randomCommand(
                        items: items, fewest: 40, most: 120, name: "s\(sender)-\(index)", using: &random)
                    sendTimes.value.withLock { $0[ref] = options.rate > 0 ? due : ContinuousClock.now }
                    client.outgoing.yield(ClientFrame(command: command, ref: ref).encoded())
                }
            }
        }
        try await group.waitForAll()
    }
    try await waitUntil("every reply", within: 300) {
        (0..<options.senders).reduce(0) { sum, sender in sum + clients[sender].received.withLock { $0.acks.count } } >= options.actions
    }
    let sent = ContinuousClock.now
    var versionSent: [Int: ContinuousClock.Instant] = [:]
    var accepted = 0
    for sender in 0..<options.senders {
        let acks = clients[sender].received.withLock { $0.acks }
        for (ref, version) in acks where version >= 0 {
            accepted += 1
            if let at = sendTimes.value.withLock({ $0[ref] }), version > startVersion {
                versionSent[version] = min(versionSent[version] ?? at, at)
            }
        }
    }
    let finalVersion = clients[0...].map { client in client.received.withLock { $0.acks.values.max() ?? 0 } }.max() ?? 0
    try await waitUntil("every client at version \(finalVersion)", within: 300) {
        clients.allSatisfy { $0.version >= finalVersion }
    }
    let converged = ContinuousClock.now
    let received = counts() - before
    let memory = processMemory(pid: serverProcess?.processIdentifier ?? getpid())

    // Check: every replica equals the first, and a fresh connection's snapshot.
    let fresh = LoadClient(port: port, token: token)
    try await waitUntil("a fresh snapshot", within: 30) { fresh.version >= 0 }
    let truth = fresh.received.withLock { $0.replica.view }
    let mismatched = clients.filter { $0.received.withLock { $0.replica.view } != truth }.count
    let failures = clients.compactMap { $0.received.withLock { $0.failure } }

    // Latency from sending an action to the moment the last client had a version that includes it.
    var latencies: [Double] = []
    let timelines = clients.map { $0.received.withLock { $0.versions } }
    for (version, sentAt) in versionSent {
        var latest = sentAt
        for timeline in timelines {
            var low = 0, high = timeline.count
            while low < high {
                let mid = (low + high) / 2
                if timeline[mid].version >= version { high = mid } else { low = mid + 1 }
            }
            if low < timeline.count { latest = max(latest, timeline[low].at) }
        }
        latencies.append(seconds(latest - sentAt) * 1_000)
    }
    latencies.sort()
    func percentile(_ p: Double) -> Double { LoadSupport.percentile(latencies, p) }

    let sendSeconds = seconds(sent - started)
    let totalSeconds = seconds(converged - started)
    let patches = received.frames
    print(String(format: "actions: %d sent, %d accepted, %d refused (stale ids); %.0f actions/s", options.actions, accepted,
                 options.actions - accepted, Double(options.actions) / sendSeconds))
    print(String(format: "patches: %d frames in %.2f s to converge: %.0f patches/s (%.1f per client; %d versions)",
                 patches, totalSeconds, Double(patches) / totalSeconds, Double(patches) / Double(options.clients),
                 finalVersion - startVersion))
    if patches > 0 {
        print(String(format: "bytes per patch: %.0f, vs %.0f for the whole state (%.1f%%)",
                     Double(received.bytes) / Double(patches), Double(received.wholeBoardBytes) / Double(patches),
                     100 * Double(received.bytes) / Double(max(received.wholeBoardBytes, 1))))
    }
    print(String(format: "latency, send to every client applied: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d versions)",
                 percentile(0.5), percentile(0.99), latencies.last ?? 0, latencies.count))
    print("versions clients skipped (folded into a later patch): \(received.skipped)")
    print("server memory: \(memory.residentKiB / 1024) MiB resident, peak \(memory.peakKiB / 1024) MiB"
        + (options.inProcess ? " (this process, clients included)" : ""))
    print("replicas equal to the server's board: \(options.clients - mismatched) of \(options.clients)"
        + (failures.isEmpty ? "" : "; failures: \(failures.prefix(3))"))
    for client in clients + [fresh] { client.outgoing.finish() }
    if options.killServer, let serverProcess {
        kill(serverProcess.processIdentifier, SIGKILL)
    } else {
        serverProcess?.terminate()
    }
    serverProcess?.waitUntilExit()
    if let dataDirectory { try? FileManager.default.removeItem(atPath: dataDirectory) }
    inProcessTask?.cancel()
    let wholeBytes = Double(received.wholeBoardBytes) / Double(max(patches, 1))
    return Row(
        label: wholeBoard ? "whole board on every change (baseline)" : "patches, interval \(options.patchIntervalMs) ms",
        actionsPerSecond: Double(options.actions) / sendSeconds, patchesPerSecond: Double(patches) / totalSeconds,
        patchesPerClient: Double(patches) / Double(options.clients), bytesPerPatch: Double(received.bytes) / Double(max(patches, 1)),
        wholeBoardBytes: wholeBytes, p50: percentile(0.5), p99: percentile(0.99), max: latencies.last ?? 0,
        rssMiB: memory.peakKiB / 1024, equal: failures.isEmpty ? options.clients - mismatched : 0,
        clients: options.clients)
}

var rows: [Row] = []
for wholeBoard in options.baseline ? [false, true] : [false] {
    rows.append(try await run(options, wholeBoard: wholeBoard))
    print("")
}
print("| \(options.clients) clients, \(options.actions) actions\(options.rate > 0 ? " at \(options.rate)/s" : "") | actions/s | patches/s | per client | bytes per patch (whole board) | p50 / p99 / max | server peak memory | replicas equal |")
print("| --- | --: | --: | --: | --: | --: | --: | --: |")
for row in rows {
    print(String(format: "| %@ | %.0f | %.0f | %.0f | %.0f (%.0f) | %.1f / %.1f / %.1f ms | %d MiB | %d of %d |",
                 row.label, row.actionsPerSecond, row.patchesPerSecond, row.patchesPerClient, row.bytesPerPatch,
                 row.wholeBoardBytes, row.p50, row.p99, row.max, row.rssMiB, row.equal, row.clients))
}
finish(rows.allSatisfy { $0.equal == $0.clients } ? 0 : 1)
