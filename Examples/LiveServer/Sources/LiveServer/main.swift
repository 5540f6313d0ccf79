import Dispatch
import Foundation
import LiveServerCore
import StillwaterPostgres

// live-server: serves the teams' boards kept under the data folder (see --help and the README).
// Exit status: 0 after a shutdown, 1 when the data folder cannot be used, 2 for a bad argument or a port
// that cannot be listened on. Every failure is one line on standard error.

/// Writes `line` to standard error.
func complain(_ line: String) {
    FileHandle.standardError.write(Data("live-server: \(line)\n".utf8))
}

/// Writes `line` to standard error and exits with `status`.
func fail(_ line: String, status: Int32) -> Never {
    complain(line)
    exit(status)
}

/// Writes `line` to standard output at once (a script waiting for it sees it without buffering).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("live-server: \(line)\n".utf8))
}

/// Ends the process at once on SIGTERM or SIGINT, until the returned sources are cancelled. (A function
/// of its own: a closure written in the top-level code would belong to the main actor, and the signal
/// queue is not it.)
func endOnSignal() -> [any DispatchSourceSignal] {
    let queue = DispatchQueue(label: "live-server.early-signals")
    return [SIGTERM, SIGINT].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler {
            say("stopped before starting")
            exit(0)
        }
        source.resume()
        return source
    }
}

let options: ServerOptions
do {
    options = try ServerOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
} catch {
    fail(error.message, status: 2)
}
if options.showsHelp {
    print(ServerOptions.usage)
    exit(0)
}

if options.checksOnly {
    // Reads only: no lock file, no teams.json, no repair is written.
    let (lines, damaged) = DataFolder(path: options.dataDirectory).check()
    lines.forEach(complain)
    if damaged { exit(1) }
    say("\(options.dataDirectory): no damage\(lines.isEmpty ? "" : " (a start would make the repairs above)")")
    exit(0)
}

// Logs (swift-log) in the format asked for, on standard error; metrics (swift-metrics) into the registry
// that /metrics reads. From here on, the lines that went to standard error go through `report`: as
// before in the text format, as JSON objects in the json format.
let registry = BoardTelemetry.bootstrap(format: options.logFormat, level: options.logLevel)
let report = BoardTelemetry.lines(format: options.logFormat)

// Until the server runs, a signal (while waiting for a database, say) ends the process at once; then
// the service group takes the signals over: it drains the clients (their waiting frames, close 1001,
// every board's closing snapshot) within 5 s and the process exits 0.
var early = endOnSignal()

// Each refused token is one line on standard error, with the client's address (forwarded by a trusted
// proxy, else the connection's own).
var folder = DataFolder(path: options.dataDirectory)
folder.refused = report
let opened: DataFolder.Opened
let readiness: BoardReadiness
var node: ClusterNode?
if let url = options.postgresURL {
    // A node of a cluster: the boards are replicas of their logs in the database.
    let log: ClusterLog
    do {
        log = try ClusterLog(url: url, keptActions: options.keptActions)
    } catch {
        fail("--postgres: \(error)", status: 2)
    }
    node = ClusterNode(log: log, presenceInterval: options.presenceInterval)
    // /readyz asks the database at each check; the boards report their logs' failures.
    readiness = BoardReadiness(database: { [log] in _ = try await log.head(of: "readyz") })
    folder.observer = BoardTelemetry.observer(readiness: readiness)
    do {
        opened = try await folder.open(options, node: node!, waiting: report)
    } catch let error as DataFolderError {
        report("\(error)")
        exit(1)
    } catch {
        report("the database at \(url) cannot be used: \(PostgresFailure.describe(error))")
        exit(1)
    }
} else {
    readiness = BoardReadiness()
    folder.observer = BoardTelemetry.observer(readiness: readiness)
    do {
        opened = try await folder.open(options) { report("warning: \($0)") }
    } catch {
        report("\(error)")
        exit(1)
    }
}

let server = BoardServer(hubs: opened.hubs, origins: options.origins, trustedProxies: options.trustedProxies,
                         operations: BoardOperations(registry: registry, readiness: readiness))
let host = options.host
let shownHost = host.contains(":") ? "[\(host)]" : host
for source in early { source.cancel() }
early = []
do {
    try await server.run(host: host, port: options.port) { port in
        let base = "http://\(shownHost):\(port)/"
        say("listening on \(base) (data: \(options.dataDirectory)\(options.postgresURL == nil ? "" : "; boards: PostgreSQL"); teams: \(opened.hubs.keys.sorted().joined(separator: ", ")))")
        for (team, token) in opened.newTokens {
            say("new team \(team): its share link, shown this once: \(base)?team=\(team)#token=\(token)")
            let viewer = ViewerTokens.token(forMemberToken: token)
            say("new team \(team): its read-only viewer link (members' pages show it too): \(base)?team=\(team)#token=\(viewer)")
        }
    }
} catch {
    report("\(error)")
    exit(2)
}
await node?.stop()
say("stopped")
exit(0)
