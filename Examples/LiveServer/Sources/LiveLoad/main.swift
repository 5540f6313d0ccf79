import Foundation
import LiveServerCore
import LoadSupport
import Logging
import Synchronization

// live-load --clients 1000 --actions 10000 [--rate N] [--senders 10] [--window 8] [--port N (0: any free one)]
//           [--patch-interval-ms N (10)] [--data DIR] [--snapshot-every N] [--kill-server]
//           [--idle-seconds S]
//
// --data DIR gives the server that folder and keeps it afterwards (a journal to restart from);
// --snapshot-every N is passed to the server; --kill-server ends it with SIGKILL (a crash: no closing
// snapshot) instead of SIGTERM. --idle-seconds S (0, the default, skips it) measures the connected
// clients at rest before any command: the server's resident memory with one client and with all of
// them (the difference over the clients after the first: memory per idle client), then, after 2 s to
// settle, its CPU time and its threads' wake-ups (context switches, /proc/PID/task/*/status) over S
// seconds in which nothing is sent, and its memory again at the end.
//
// Starts the server (the `live-server` binary beside this one, so its memory and CPU time are its own),
// connects the clients to team `alpha` over the live protocol (a WebSocket to /live?team=alpha, a hello
// with the token), lets `senders` of them send `actions` commands, each with a ref and a cid (at `rate`
// actions a second in all, or as fast as answers come with --rate 0; each sender keeps at most `window`
// unanswered), waits until every client's replica has the final version, checks all replicas are equal
// to a fresh client's snapshot, and prints the figures. A command's latency runs from the moment it was
// due to be sent (so a sender held back by its window counts the wait) to its ack, and to the moment the
// last client had a version that includes it. The server's CPU time (user and system, from
// /proc/PID/stat) from the first command to the last client's convergence is divided by the frames the
// clients received meanwhile (every frame the server wrote): the server's CPU per delivered frame.
// Every figure but the server's memory and CPU time (read from /proc) is counted by the clients from the
// frames they receive; "bytes per patch" is set against the bytes of a snapshot of the whole board at
// the patch's version.
// Exit status: 0, 1 when a replica differs or a run times out, 2 for a bad argument.

struct Options {
    var clients = 1_000
    var actions = 10_000
    var senders = 10
    var window = 8
    var port = 0
    var patchIntervalMs = 10
    var rate = 0
    var data: String?
    var snapshotEvery: Int?
    var killServer = false
    var idleSeconds = 0
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
    case "--patch-interval-ms": options.patchIntervalMs = value()
    case "--rate": options.rate = value()
    case "--data":
        guard let folder = arguments.popFirst(), !folder.isEmpty else {
            FileHandle.standardError.write(Data("live-load: --data needs a folder\n".utf8))
            exit(2)
        }
        options.data = folder
    case "--snapshot-every": options.snapshotEvery = value()
    case "--kill-server": options.killServer = true
    case "--idle-seconds": options.idleSeconds = value()
    default:
        FileHandle.standardError.write(Data("""
            usage: live-load [--clients N] [--actions N] [--rate N] [--senders N] [--window N] [--port N]
                             [--patch-interval-ms N] [--data DIR]
                             [--snapshot-every N] [--kill-server] [--idle-seconds S]

            """.utf8))
        exit(2)
    }
}
guard options.clients > 0, options.actions > 0, options.senders > 0, options.window > 0, options.patchIntervalMs > 0 else {
    FileHandle.standardError.write(Data("live-load: --clients, --actions, --senders, --window and --patch-interval-ms must be at least 1\n".utf8))
    exit(2)
}
options.senders = min(options.senders, options.clients)

raiseOpenFileLimit()

let logger = {
    var logger = Logger(label: "live-load")
    logger.logLevel = .error
    return logger
}()

/// The server process of the run in progress, ended with this program however it ends.
final class Child: Sendable {
    let process = Mutex<Process?>(nil)
}
let child = Child()

/// Ends the server child, if any, then this program with `status`.
@Sendable func finish(_ status: Int32) -> Never {
    child.process.withLock { process in
        if let process, process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
    exit(status)
}

// A SIGTERM or SIGINT (`timeout`, Ctrl-C) ends the server child too, instead of leaving it running.
let signalSources = onTerminationSignals { finish(1) }

func waitUntil(_ what: @autoclosure () -> String, within seconds: Double, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            print("live-load: timed out after \(Int(seconds)) s waiting for \(what())")
            finish(1)
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// One run's figures, a row of the table.
struct Row {
    var label: String
    var actionsPerSecond: Double
    var patchesPerSecond: Double
    var patchesPerClient: Double
    var bytesPerPatch: Double
    var wholeBoardBytes: Double
    var seen: (p50: Double, p99: Double, max: Double)
    var acked: (p50: Double, p99: Double)
    var cpuPerFrame: (user: Double, system: Double)?
    var rssMiB: Int
    var equal: Int
    var clients: Int
}

/// A new token: 32 random hexadecimal digits.
func newToken() -> String {
    var random = SystemRandomNumberGenerator()
    return (0..<4).map { _ in String(UInt32.random(in: 0...UInt32.max, using: &random), radix: 16) }
        .map { String(repeating: "0", count: 8 - $0.count) + $0 }.joined()
}

func milliseconds(_ from: ContinuousClock.Instant, _ to: ContinuousClock.Instant) -> Double { seconds(to - from) * 1_000 }

/// Prints the server's memory per connected idle client and its CPU time and wake-ups over `seconds`
/// in which nothing is sent (see --idle-seconds).
func measureIdle(pid: Int32, clients: Int, oneClientKiB: Int, seconds idle: Int) async throws {
    try await Task.sleep(for: .seconds(2))
    let all = processMemory(pid: pid).residentKiB
    let perClient = clients > 1 ? Double(all - oneClientKiB) / Double(clients - 1) : 0
    print(String(format: "idle: server %.1f MiB resident with %d clients connected, %.1f MiB with one: %.1f KiB per idle client",
                 Double(all) / 1024, clients, Double(oneClientKiB) / 1024, perClient))
    let cpuBefore = processCPU(pid: pid), switchesBefore = processContextSwitches(pid: pid)
    try await Task.sleep(for: .seconds(idle))
    if let cpuBefore, let cpuAfter = processCPU(pid: pid), let switchesBefore, let switchesAfter = processContextSwitches(pid: pid) {
        let cpu = seconds(cpuAfter.user - cpuBefore.user + cpuAfter.system - cpuBefore.system)
        print(String(format: "idle: over %d s with nothing sent, server CPU %.0f ms (%.2f%% of a core), %d wake-ups (%.1f a second)",
                     idle, cpu * 1_000, cpu * 100 / Double(idle), switchesAfter - switchesBefore,
                     Double(switchesAfter - switchesBefore) / Double(idle)))
    }
    let end = processMemory(pid: pid).residentKiB
    print(String(format: "idle: server %.1f MiB resident at the end: %.1f KiB per idle client",
                 Double(end) / 1024, clients > 1 ? Double(end - oneClientKiB) / Double(clients - 1) : 0))
}

func run(_ options: Options) async throws -> Row {
    // The server: a fresh data folder, removed at the end (unless --data), the board a new team's.
    guard let binary = siblingServer() else { exit(2) }
    let folder = options.data ?? FileManager.default.temporaryDirectory.appendingPathComponent("live-load-\(getpid())").path
    let token = newToken()
    // With --port 0 (the default) the server picks a port and names it in its "listening on" line.
    guard let (server, port) = try await startServer(binary, arguments: [
        "--port", String(options.port), "--patch-interval-ms", String(options.patchIntervalMs),
        "--data", folder, "--team", "alpha=\(token)"]
        + (options.snapshotEvery.map { ["--snapshot-every", String($0)] } ?? []))
    else {
        print("live-load: the server did not start (see its standard error above)")
        finish(1)
    }
    child.process.withLock { $0 = server }
    let pid = server.processIdentifier
    print("live-load: \(options.clients) clients, \(options.actions) actions from \(options.senders) senders "
        + "(window \(options.window), \(options.rate > 0 ? "\(options.rate) actions/s" : "as fast as answered")"
        + ", patch interval \(options.patchIntervalMs) ms), server pid \(pid) on port \(port)")

    // Connect (retrying the first one until the server listens).
    let decoder = SharedFrameDecoder(), sizes = WholeBoardSizes()
    func connect() -> BoardLoadClient {
        BoardLoadClient(team: "alpha", token: token, reconnects: false, decoder: decoder, sizes: sizes, logger: logger) { [port] }
    }
    var probe = connect()
    for _ in 0..<100 where probe.version < 0 {
        try await Task.sleep(for: .milliseconds(100))
        if probe.failure != nil {
            probe.stop()
            probe = connect()
        }
    }
    let oneClient = processMemory(pid: pid).residentKiB
    // The others in batches of 250, each batch once the one before has its snapshots (so ten thousand
    // connections do not all wait for their hello at once).
    var clients = [probe]
    while clients.count < options.clients {
        for _ in 0..<min(250, options.clients - clients.count) { clients.append(connect()) }
        try await waitUntil("a batch of snapshots", within: 60) { clients.allSatisfy { $0.version >= 0 || $0.failure != nil } }
    }
    func connected() -> String {
        let failures = clients.compactMap(\.failure)
        return "\(clients.filter { $0.version >= 0 }.count) of \(clients.count) had one"
            + (failures.isEmpty ? "" : "; \(failures.count) failed, the first: \(failures[0])")
    }
    try await waitUntil("every snapshot (\(connected()))",
                        within: 10) { clients.allSatisfy { $0.version >= 0 } }
    let startVersion = clients[0].version
    if options.idleSeconds > 0 {
        try await measureIdle(pid: pid, clients: clients.count, oneClientKiB: oneClient, seconds: options.idleSeconds)
    }

    func counts() -> (FrameCounts, frames: Int) {
        clients.reduce((FrameCounts(), frames: 0)) { sum, client in
            client.state.withLock { (sum.0 + $0.counts, sum.frames + $0.framesReceived) }
        }
    }
    let before = counts()
    let cpuBefore = processCPU(pid: pid), ownBefore = processCPU(pid: getpid())

    // Send. Command ids are new in each run, so a journal kept with --data never answers them as duplicates.
    let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)
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
                    while client.state.withLock({ $0.unanswered >= options.window }) { try await Task.sleep(for: .microseconds(200)) }
                    let command = randomCommand(
                        items: client.view?.items ?? [], fewest: 40, most: 120, name: "s\(sender)-\(index)", using: &random)
                    client.send(command, ref: ref, cid: "\(run)-\(sender)-\(index)", sentAt: options.rate > 0 ? due : .now)
                }
            }
        }
        try await group.waitForAll()
    }
    try await waitUntil("every reply", within: 300) {
        clients[0..<options.senders].reduce(0) { sum, client in sum + client.state.withLock { $0.answers.count } } >= options.actions
    }
    let sent = ContinuousClock.now
    let answers = clients[0..<options.senders].flatMap { client in client.state.withLock { Array($0.answers.values) } }
    let accepted = answers.filter { $0.version != nil }
    let finalVersion = accepted.compactMap(\.version).max() ?? startVersion
    try await waitUntil("every client at version \(finalVersion)", within: 300) {
        clients.allSatisfy { $0.version >= finalVersion }
    }
    let converged = ContinuousClock.now
    let cpuAfter = processCPU(pid: pid), ownAfter = processCPU(pid: getpid())
    let after = counts()
    let received = after.0 - before.0
    let delivered = after.frames - before.frames
    let memory = processMemory(pid: pid)

    // Check: every replica equals a fresh connection's snapshot.
    let fresh = connect()
    try await waitUntil("a fresh snapshot", within: 30) { fresh.version >= 0 }
    let truth = fresh.view
    let mismatched = clients.filter { $0.view != truth }.count
    let failures = (clients + [fresh]).compactMap(\.failure)

    // Latency from a command's sending to its ack, and to the moment the last client had a version
    // that includes it (the first command of each version counts).
    let acked = accepted.map { milliseconds($0.sentAt, $0.answeredAt) }.sorted()
    var versionSent: [Int: ContinuousClock.Instant] = [:]
    for answer in accepted where answer.version! > startVersion {
        versionSent[answer.version!] = min(versionSent[answer.version!] ?? answer.sentAt, answer.sentAt)
    }
    var seen: [Double] = []
    let timelines = clients.map { $0.state.withLock { $0.versions } }
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
        seen.append(milliseconds(sentAt, latest))
    }
    seen.sort()

    let sendSeconds = seconds(sent - started)
    let totalSeconds = seconds(converged - started)
    let patches = received.frames
    print(String(format: "actions: %d sent, %d accepted, %d refused (stale ids); %.0f actions/s", options.actions, accepted.count,
                 options.actions - accepted.count, Double(options.actions) / sendSeconds))
    print(String(format: "patches: %d frames in %.2f s to converge: %.0f patches/s (%.1f per client; %d versions)",
                 patches, totalSeconds, Double(patches) / totalSeconds, Double(patches) / Double(options.clients),
                 finalVersion - startVersion))
    if patches > 0 {
        print(String(format: "bytes per patch: %.0f, vs %.0f for the whole state (%.1f%%)",
                     Double(received.bytes) / Double(patches), Double(received.wholeBoardBytes) / Double(patches),
                     100 * Double(received.bytes) / Double(max(received.wholeBoardBytes, 1))))
    }
    print(String(format: "latency, send to ack: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d commands)",
                 percentile(acked, 0.5), percentile(acked, 0.99), acked.last ?? 0, acked.count))
    print(String(format: "latency, send to every client applied: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d versions)",
                 percentile(seen, 0.5), percentile(seen, 0.99), seen.last ?? 0, seen.count))
    print("versions clients skipped (folded into a later patch): \(received.skipped)")
    var cpuPerFrame: (user: Double, system: Double)?
    if let cpuBefore, let cpuAfter, delivered > 0 {
        let user = seconds(cpuAfter.user - cpuBefore.user), system = seconds(cpuAfter.system - cpuBefore.system)
        cpuPerFrame = (user * 1e6 / Double(delivered), system * 1e6 / Double(delivered))
        print(String(format: "server CPU: user %.2f s + system %.2f s over %d frames delivered: %.1f µs per frame (user %.1f, system %.1f; %.0f%% in the kernel)",
                     user, system, delivered, cpuPerFrame!.user + cpuPerFrame!.system, cpuPerFrame!.user, cpuPerFrame!.system,
                     100 * system / max(user + system, 1e-9)))
    } else {
        print("server CPU: not read (no /proc/\(pid)/stat)")
    }
    if let ownBefore, let ownAfter, delivered > 0 {
        let own = seconds(ownAfter.user - ownBefore.user + ownAfter.system - ownBefore.system)
        print(String(format: "load program CPU (its clients and senders, beside the server): %.2f s, %.1f µs per frame received",
                     own, own * 1e6 / Double(delivered)))
    }
    print("server memory: \(memory.residentKiB / 1024) MiB resident, peak \(memory.peakKiB / 1024) MiB")
    print("replicas equal to the server's board: \(options.clients - mismatched) of \(options.clients)"
        + (failures.isEmpty ? "" : "; failures: \(failures.prefix(3))"))
    for client in clients + [fresh] { client.stop() }
    if options.killServer {
        kill(pid, SIGKILL)
    } else {
        server.terminate()
    }
    server.waitUntilExit()
    child.process.withLock { $0 = nil }
    if options.data == nil { try? FileManager.default.removeItem(atPath: folder) }
    return Row(
        label: "patches, interval \(options.patchIntervalMs) ms",
        actionsPerSecond: Double(options.actions) / sendSeconds, patchesPerSecond: Double(patches) / totalSeconds,
        patchesPerClient: Double(patches) / Double(options.clients), bytesPerPatch: Double(received.bytes) / Double(max(patches, 1)),
        wholeBoardBytes: Double(received.wholeBoardBytes) / Double(max(patches, 1)),
        seen: (percentile(seen, 0.5), percentile(seen, 0.99), seen.last ?? 0),
        acked: (percentile(acked, 0.5), percentile(acked, 0.99)), cpuPerFrame: cpuPerFrame,
        rssMiB: memory.peakKiB / 1024, equal: failures.isEmpty ? options.clients - mismatched : 0, clients: options.clients)
}

let rows = [try await run(options)]
print("")
print("| \(options.clients) clients, \(options.actions) actions\(options.rate > 0 ? " at \(options.rate)/s" : "") | actions/s | patches/s | per client | bytes per patch (whole board) | ack p50 / p99 | seen p50 / p99 / max | server CPU per frame (user + system) | server peak memory | replicas equal |")
print("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |")
for row in rows {
    let cpu = row.cpuPerFrame.map { String(format: "%.1f µs (%.1f + %.1f)", $0.user + $0.system, $0.user, $0.system) } ?? "not read"
    print(String(format: "| %@ | %.0f | %.0f | %.0f | %.0f (%.0f) | %.1f / %.1f ms | %.1f / %.1f / %.1f ms | %@ | %d MiB | %d of %d |",
                 row.label, row.actionsPerSecond, row.patchesPerSecond, row.patchesPerClient, row.bytesPerPatch,
                 row.wholeBoardBytes, row.acked.p50, row.acked.p99, row.seen.p50, row.seen.p99, row.seen.max, cpu,
                 row.rssMiB, row.equal, row.clients))
}
finish(rows.allSatisfy { $0.equal == $0.clients } ? 0 : 1)
