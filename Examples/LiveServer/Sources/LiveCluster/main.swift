import Foundation
import LiveServerCore
import LoadSupport
import Logging
import StillwaterLive
import StillwaterPostgres
import Synchronization

// live-cluster --postgres URL [--nodes 3] [--clients 30] [--senders N] [--actions 3000] [--rate 300]
//              [--window 8] [--patch-interval-ms 10] [--snapshot-every 500]
//              [--kill-node] [--pause-node] [--restart-postgres COMMAND] [--late-node]
//              [--presence-interval-ms 500]
//
// Runs a cluster of `live-server --postgres URL` nodes (the binary beside this one) on a new team, so on a
// new log, and checks it. Clients speak the live protocol (a WebSocket to /live?team=TEAM, a hello with
// the token) and are spread over the nodes; `senders` of them (all, unless given) send
// `actions` random commands (add, toggle, rename, move, delete, retitle on ids their replicas show) in all,
// at `rate` a second, each with its own command id, at most `window` unanswered per sender. A client whose
// connection drops connects to the next node still running and resumes from its version; every command not
// yet answered is sent again with its id, and so is one answered "retry later". At half the actions:
// --kill-node kills node 1 with SIGKILL, --pause-node stops the last node with SIGSTOP for 3 s (it then
// catches up from the table), --restart-postgres runs COMMAND (with sh -c) to restart the database.
// --late-node starts one more node after the run, from the newest snapshot and the tail.
//
// Then it checks: every client and a fresh client on every running node show the same board; every
// acknowledged command id is in the log exactly once, no id is there that was not sent, and the log
// replayed from its newest snapshot gives the same board; and every client, on every node, lists in its
// `presence` exactly the clients connected to all the nodes (the nodes tell each other who is connected
// every `presence-interval-ms`, 500 unless given). With --kill-node, the killed node's clients must leave
// the other nodes' lists within four intervals and a second of the kill. It prints the figures (latency from a command's
// sending to the moment the last client, on any node, had a version including it) and exits 0, or 1 when a
// check fails or the run times out, 2 for a bad argument.

struct Options {
    var postgres = ""
    var nodes = 3
    var clients = 30
    var senders = 0
    var actions = 3_000
    var rate = 300
    var window = 8
    var patchIntervalMs = 10
    var snapshotEvery = 500
    var killNode = false
    var pauseNode = false
    var restartPostgres: String?
    var lateNode = false
    var presenceIntervalMs = 500
}

func usage(_ line: String) -> Never {
    FileHandle.standardError.write(Data("""
        live-cluster: \(line)
        usage: live-cluster --postgres URL [--nodes N] [--clients N] [--senders N] [--actions N] [--rate N]
                            [--window N] [--patch-interval-ms N] [--snapshot-every N]
                            [--kill-node] [--pause-node] [--restart-postgres COMMAND] [--late-node]
                            [--presence-interval-ms N]

        """.utf8))
    exit(2)
}

var options = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    func number(_ least: Int) -> Int {
        guard let text = arguments.popFirst(), let value = Int(text), value >= least else {
            usage("\(argument) needs a whole number, \(least) or more")
        }
        return value
    }
    switch argument {
    case "--postgres":
        guard let url = arguments.popFirst() else { usage("--postgres needs a URL") }
        options.postgres = url
    case "--nodes": options.nodes = number(1)
    case "--clients": options.clients = number(1)
    case "--senders": options.senders = number(1)
    case "--actions": options.actions = number(1)
    case "--rate": options.rate = number(1)
    case "--window": options.window = number(1)
    case "--patch-interval-ms": options.patchIntervalMs = number(0)
    case "--snapshot-every": options.snapshotEvery = number(1)
    case "--kill-node": options.killNode = true
    case "--pause-node": options.pauseNode = true
    case "--restart-postgres":
        guard let command = arguments.popFirst() else { usage("--restart-postgres needs a command") }
        options.restartPostgres = command
    case "--late-node": options.lateNode = true
    case "--presence-interval-ms": options.presenceIntervalMs = number(100)
    default: usage("unknown argument \"\(argument.prefix(64))\"")
    }
}
guard !options.postgres.isEmpty else { usage("--postgres is required") }
if options.killNode && options.nodes < 2 { usage("--kill-node needs --nodes 2 or more") }
options.senders = options.senders == 0 ? options.clients : min(options.senders, options.clients)
/// The options, read from anywhere.
let config = options

raiseOpenFileLimit()

let logger = {
    var logger = Logger(label: "live-cluster")
    logger.logLevel = .critical
    return logger
}()

func say(_ line: String) { print("live-cluster: \(line)") }

// MARK: nodes

/// The nodes this program started, ended with it however it ends.
final class Nodes: Sendable {
    struct Node {
        var process: Process
        var port: Int
        var running = true
    }

    let nodes = Mutex<[Node]>([])
    let folder: String
    let team: String
    let token: String

    init(team: String, token: String) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("live-cluster-\(getpid())").path
        self.team = team
        self.token = token
    }

    /// Starts one more node and returns its index once it listens.
    func start() async throws -> Int {
        guard let binary = siblingServer() else { exit(2) }
        let index = nodes.withLock { $0.count }
        guard let (process, port) = try await startServer(binary, arguments: [
            "--port", "0", "--postgres", config.postgres, "--data", "\(folder)/node-\(index)",
            "--team", "\(team)=\(token)", "--patch-interval-ms", String(config.patchIntervalMs),
            "--snapshot-every", String(config.snapshotEvery),
            "--presence-interval-ms", String(config.presenceIntervalMs),
        ]) else {
            say("node \(index + 1) did not start")
            finish(1)
        }
        nodes.withLock { $0.append(Node(process: process, port: port)) }
        say("node \(index + 1) (pid \(process.processIdentifier)) on port \(port)")
        return index
    }

    /// The ports of the running nodes, by index (`nil` for a stopped one).
    var ports: [Int?] { nodes.withLock { $0.map { $0.running ? $0.port : nil } } }

    func kill(_ index: Int) {
        nodes.withLock { nodes in
            Foundation.kill(nodes[index].process.processIdentifier, SIGKILL)
            nodes[index].process.waitUntilExit()
            nodes[index].running = false
        }
    }

    func signal(_ index: Int, _ number: Int32) {
        _ = nodes.withLock { Foundation.kill($0[index].process.processIdentifier, number) }
    }

    func stopAll() {
        nodes.withLock { nodes in
            for node in nodes where node.process.isRunning {
                Foundation.kill(node.process.processIdentifier, SIGCONT)
                node.process.terminate()
                node.process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

let team = "cluster-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
let nodes = Nodes(team: team, token: "cluster-token-\(UInt64.random(in: 0...UInt64.max))")

@Sendable func finish(_ status: Int32) -> Never {
    nodes.stopAll()
    exit(status)
}

let signalSources = onTerminationSignals { finish(1) }

@MainActor func waitUntil(_ what: String, within seconds: Double, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try !condition() {
        guard ContinuousClock.now < deadline else {
            say("FAILED: timed out waiting for \(what)")
            finish(1)
        }
        try await Task.sleep(for: .milliseconds(20))
    }
}

// MARK: clients

let decoder = SharedFrameDecoder(), sizes = WholeBoardSizes()

/// A client that stays connected to some node: when its connection drops it connects to the next node
/// still running, resumes from its version, and sends again every command not yet answered.
func client(node: Int) -> BoardLoadClient {
    BoardLoadClient(team: team, token: nodes.token, node: node, reconnects: true, decoder: decoder, sizes: sizes,
                    logger: logger) { nodes.ports }
}

/// Runs `command` with `sh -c` and returns its exit status (waited for off the main thread, with waitpid:
/// Foundation's Process left such a child unreaped here).
func shell(_ command: String) async -> Int32 {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            var pid: pid_t = 0
            let arguments = ["/bin/sh", "-c", command]
            var argv = arguments.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            guard posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0 else {
                continuation.resume(returning: -1)
                return
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            continuation.resume(returning: (status >> 8) & 0xFF)
        }
    }
}

// MARK: the run

for _ in 0..<config.nodes { _ = try await nodes.start() }
say("team \(team), \(config.nodes) nodes, \(config.clients) clients (\(config.senders) sending), "
    + "\(config.actions) actions at \(config.rate)/s, window \(config.window), patch interval \(config.patchIntervalMs) ms")
var clients: [BoardLoadClient] = []
for index in 0..<config.clients { clients.append(client(node: index % config.nodes)) }
try await waitUntil("every snapshot", within: 60) { clients.allSatisfy { $0.version >= 0 } }
let startVersion = clients.map(\.version).max() ?? 0

let started = ContinuousClock.now
final class Flag: Sendable { let value = Mutex(false) }
let half = Flag()
/// How long the killed node's clients stayed in the other nodes' presence lists after the kill.
let killedLeft = Mutex<Duration?>(nil)
/// The longest a dead node's clients may stay listed: the exchange's time to live (three intervals), its
/// next round, and a second for the patch interval and the database.
let presenceBound = Duration.milliseconds(config.presenceIntervalMs * 4) + .seconds(1)
let events = Task {
    try await waitUntil("half the actions", within: 600) { half.value.withLock { $0 } }
    if config.killNode {
        let onKilled = clients.filter { $0.state.withLock { $0.node == 0 } }
        let killedIDs = Set(onKilled.compactMap { $0.state.withLock(\.client) })
        let watchers = clients.filter { client in !onKilled.contains { $0 === client } }
        say("kill -9 node 1 (its \(killedIDs.count) clients move to other nodes)")
        nodes.kill(0)
        let killedAt = ContinuousClock.now
        try await waitUntil("the killed node's clients to leave the presence lists", within: 120) {
            watchers.allSatisfy { $0.state.withLock { $0.presence.isDisjoint(with: killedIDs) } }
        }
        killedLeft.withLock { $0 = ContinuousClock.now - killedAt }
    }
    if config.pauseNode {
        say("SIGSTOP node \(config.nodes) for 3 s")
        nodes.signal(config.nodes - 1, SIGSTOP)
    }
    if let command = config.restartPostgres {
        say("restarting PostgreSQL: \(command)")
        say("PostgreSQL restarted (status \(await shell(command)))")
    }
    if config.pauseNode {
        try await Task.sleep(for: .seconds(3))
        nodes.signal(config.nodes - 1, SIGCONT)
        say("SIGCONT node \(config.nodes)")
    }
}
try await withThrowingTaskGroup(of: Void.self) { group in
    for sender in 0..<config.senders {
        let client = clients[sender]
        let share = config.actions / config.senders + (sender < config.actions % config.senders ? 1 : 0)
        group.addTask {
            var random = SystemRandomNumberGenerator()
            for index in 0..<share {
                let ref = index * config.senders + sender + 1
                if ref == config.actions / 2 { half.value.withLock { $0 = true } }
                try await Task.sleep(until: started + .seconds(Double(ref - 1) / Double(config.rate)), clock: .continuous)
                while client.state.withLock({ $0.unanswered >= config.window }) { try await Task.sleep(for: .milliseconds(1)) }
                let items = client.view?.items ?? []
                let cid = "s\(sender)-\(index)"
                let command = randomCommand(items: items, fewest: 30, most: 100, name: cid, using: &random)
                client.send(command, ref: ref, cid: cid)
            }
        }
    }
    try await group.waitForAll()
}
let sendSeconds = seconds(ContinuousClock.now - started)
try await waitUntil("every answer", within: 300) {
    clients.reduce(0) { $0 + $1.state.withLock { $0.answers.count } } >= config.actions
}
try await events.value

// Convergence: every client, and a fresh client on every running node, at the log's head.
let journal = try ClusterLog(url: config.postgres)
var fresh: [BoardLoadClient] = []
@MainActor func converged() -> Bool {
    let views = (clients + fresh).map(\.view)
    return views.allSatisfy { $0 != nil && $0 == views[0] }
}
try await waitUntil("every client on one board", within: 120) { converged() }
@MainActor func freshClients() async throws {
    fresh.forEach { $0.stop() }
    fresh = nodes.ports.enumerated().compactMap { index, port in port.map { _ in client(node: index) } }
    try await waitUntil("fresh clients' snapshots", within: 60) { fresh.allSatisfy { $0.version >= 0 } }
}
try await freshClients()
try await waitUntil("every client and node on one board", within: 120) { converged() }
let convergedAt = ContinuousClock.now
var failures: [String] = []

// Presence: every client, on every node, lists exactly the clients connected to all the nodes.
@MainActor func presenceAgrees() -> Bool {
    let connected = Set((clients + fresh).compactMap { $0.state.withLock(\.client) })
    return (clients + fresh).allSatisfy { $0.state.withLock { $0.presence == connected } }
}
let presenceWait = ContinuousClock.now
try await waitUntil("every client to list every connected client", within: 30 + seconds(presenceBound)) { presenceAgrees() }
let listed = Set((clients + fresh).compactMap { $0.state.withLock(\.client) }).count
say(String(format: "presence: every client lists the %d clients of all nodes (agreed %.2f s after the boards did)",
           listed, seconds(ContinuousClock.now - presenceWait)))
if let left = killedLeft.withLock({ $0 }) {
    say(String(format: "presence: the killed node's clients left every list %.2f s after the kill (bound %.2f s)",
               seconds(left), seconds(presenceBound)))
    if left > presenceBound { failures.append("the killed node's clients stayed listed \(left), over \(presenceBound)") }
}

if config.lateNode {
    let index = try await nodes.start()
    say("late node \(index + 1) started from the newest snapshot and the tail")
    try await freshClients()
    try await waitUntil("the late node on the same board", within: 60) { converged() }
}

// Exactly once: every acknowledged id in the log once, no id in it that was not sent.
var logCids: [String: Int] = [:]
var records: [ClusterLog.Record] = []
var position: Int64 = 0
while true {
    let page = try await journal.records(of: team, after: position, limit: 5_000)
    guard let last = page.last else { break }
    records += page
    position = last.seq
}
for record in records { if let cid = record.action.cid { logCids[cid, default: 0] += 1 } }
var acked: [String: (version: Int, sentAt: ContinuousClock.Instant)] = [:]
for client in clients {
    for answer in client.state.withLock({ $0.answers.values }) {
        if let cid = answer.cid, let version = answer.version { acked[cid] = (version, answer.sentAt) }
    }
}
let sentCids = Set((0..<config.senders).flatMap { sender in
    (0..<(config.actions / config.senders + 1)).map { "s\(sender)-\($0)" }
})
let missing = acked.keys.filter { logCids[$0] != 1 }
let unknown = logCids.keys.filter { !sentCids.contains($0) }
if !missing.isEmpty { failures.append("\(missing.count) acknowledged commands not in the log exactly once: \(missing.prefix(5))") }
if !unknown.isEmpty { failures.append("\(unknown.count) ids in the log never sent: \(unknown.prefix(5))") }
if records.count != logCids.count { failures.append("\(records.count) actions in the log, \(logCids.count) distinct ids") }
let addedTexts = (clients[0].view?.items ?? []).map(\.text).filter { !$0.contains(" ") }
if Set(addedTexts).count != addedTexts.count { failures.append("an added item appears twice on the board") }

// The log replayed from its newest snapshot gives the board every client has.
if let (snapshotSeq, snapshot) = try await journal.newestSnapshot(of: team) {
    var replayed = snapshot
    for record in records where record.seq > snapshotSeq { record.action.reduce(&replayed) }
    if LiveBoardView(title: replayed.state.title, items: replayed.state.items) != clients[0].view {
        failures.append("the log replayed from its snapshot at \(snapshotSeq) differs from the clients' board")
    }
} else {
    failures.append("the log \(team) has no snapshot")
}
let snapshots = try await journal.snapshotSeqs(of: team)
await journal.close()

let views = (clients + fresh).map(\.view)
let equal = views.filter { $0 == clients[0].view }.count
if equal != views.count { failures.append("\(views.count - equal) replicas differ") }
let clientFailures = (clients + fresh).compactMap(\.failure)
if !clientFailures.isEmpty { failures.append("client failures: \(clientFailures.prefix(3))") }

// Latency: from a command's first sending to the moment the last client had a version including it.
let timelines = clients.map { $0.state.withLock { $0.versions } }
var latencies: [Double] = []
var firstSent: [Int: ContinuousClock.Instant] = [:]
for (_, value) in acked where value.version > startVersion { firstSent[value.version] = min(firstSent[value.version] ?? value.sentAt, value.sentAt) }
for (version, sentAt) in firstSent {
    var latest = sentAt
    for timeline in timelines {
        guard let reached = timeline.first(where: { $0.version >= version }) else { continue }
        latest = max(latest, reached.at)
    }
    latencies.append(seconds(latest - sentAt) * 1_000)
}
latencies.sort()
let sorted = latencies
func percentile(_ p: Double) -> Double { LoadSupport.percentile(sorted, p) }
let totals = clients.reduce(into: [0, 0, 0, 0]) { sums, client in
    client.state.withLock { state in
        sums[0] += state.refused; sums[1] += state.duplicates; sums[2] += state.retries; sums[3] += state.reconnects
    }
}
say(String(format: "%d actions sent in %.2f s (%.0f actions/s); %d acknowledged, %d refused (stale ids), %d answered as duplicates, %d retried after \"try again later\", %d reconnects",
           config.actions, sendSeconds, Double(config.actions) / sendSeconds, acked.count, totals[0], totals[1], totals[2], totals[3]))
say("log: \(records.count) actions, \(logCids.count) ids, snapshots at \(snapshots); board version \(clients[0].version) in \(String(format: "%.2f", seconds(convergedAt - started))) s")
say(String(format: "latency, sending to the last client applied: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d versions)",
           percentile(0.5), percentile(0.99), latencies.last ?? 0, latencies.count))
say("replicas equal: \(equal) of \(views.count) (\(clients.count) clients, \(fresh.count) fresh clients, one per running node)")
if failures.isEmpty {
    say("OK: every replica equal, every acknowledged command in the log exactly once")
    finish(0)
}
for failure in failures { say("FAILED: \(failure)") }
finish(1)
