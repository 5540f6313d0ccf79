import Dispatch
import Foundation
import Hummingbird
import LiveServerCore
import Logging
import ServiceLifecycle

// live-server: serves the teams' boards kept under the data folder (see --help and the README).
// Exit status: 0 after a shutdown, 1 when the data folder cannot be used, 2 for a bad argument or a port
// that cannot be listened on. Every failure is one line on standard error.

/// Writes `line` to standard error and exits with `status`.
func fail(_ line: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("live-server: \(line)\n".utf8))
    exit(status)
}

/// Closes every board (each writes a snapshot, so the next start replays nothing); a failure is reported
/// and loses nothing, since every accepted command is in its journal.
@Sendable func closeBoards(_ server: LiveServer) {
    for (team, board) in server.teams.sorted(by: { $0.key < $1.key }) {
        do {
            try board.close()
        } catch {
            FileHandle.standardError.write(Data("live-server: team \(team): the closing snapshot failed (\(error)); the journal is intact\n".utf8))
        }
    }
}

/// Writes `line` to standard output at once (a script waiting for it sees it without buffering).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("live-server: \(line)\n".utf8))
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
    for line in lines { FileHandle.standardError.write(Data("live-server: \(line)\n".utf8)) }
    if damaged { exit(1) }
    say("\(options.dataDirectory): no damage\(lines.isEmpty ? "" : " (a start would make the repairs above)")")
    exit(0)
}

/// The server once it is open; `nil` while the data folder or the database is being opened.
let running = Locked<LiveServer?>(nil)

// A shutdown ends within 5 s whatever clients do: the service group gives connections 3 s to close,
// then cancels them; the watchdog ends the process should anything still hang, after the boards' closing
// snapshots. Every acknowledged command is already in its journal, so nothing is lost either way. Before
// the server is open (waiting for a database, say), a signal ends the process at once. One watchdog for
// the process's life: its signal sources are never replaced.
let watchdog = ShutdownWatchdog(limit: .milliseconds(4_000), onSignal: {
    guard let server = running.withLock({ $0 }) else {
        say("stopped before starting")
        exit(0)
    }
    server.closeQuietConnections()
}) {
    if let server = running.withLock({ $0 }) { closeBoards(server) }
}

let opened: DataFolder.Opened
if let url = options.postgresURL {
    // A node of a cluster: the boards are replicas of their logs in the database.
    let log: BoardLog
    do {
        log = try BoardLog(url: url, keptActions: options.keptActions)
    } catch {
        fail("--postgres: \(error)", status: 2)
    }
    let node = ClusterNode(log: log)
    do {
        opened = try await DataFolder(path: options.dataDirectory).open(options, node: node) { line in
            FileHandle.standardError.write(Data("live-server: \(line)\n".utf8))
        }
    } catch let error as DataFolderError {
        fail("\(error)", status: 1)
    } catch {
        fail("the database at \(url) cannot be used: \(ClusterNode.describe(error))", status: 1)
    }
} else {
    do {
        opened = try DataFolder(path: options.dataDirectory).open(options) { warning in
            FileHandle.standardError.write(Data("live-server: warning: \(warning)\n".utf8))
        }
    } catch {
        fail("\(error)", status: 1)
    }
}
let server = opened.server
running.withLock { $0 = server }

var logger = Logger(label: "live-server")
logger.logLevel = .warning
let host = options.host
let shownHost = host.contains(":") ? "[\(host)]" : host
let app = server.application(host: host, port: options.port, logger: logger) { port in
    let base = "http://\(shownHost):\(port)/"
    say("listening on \(base) (data: \(options.dataDirectory)\(options.postgresURL == nil ? "" : "; boards: PostgreSQL"); teams: \(server.teams.keys.sorted().joined(separator: ", ")))")
    for (team, token) in opened.newTokens {
        say("new team \(team): its share link, shown this once: \(base)?team=\(team)#token=\(token)")
    }
}


var configuration = ServiceGroupConfiguration(services: [app, server.closingService], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
configuration.maximumGracefulShutdownDuration = .seconds(3)
do {
    try await ServiceGroup(configuration: configuration).run()
} catch {
    fail(ListenFailure.describe(error, host: host, port: options.port), status: 2)
}
closeBoards(server)
say("stopped")
exit(0)
