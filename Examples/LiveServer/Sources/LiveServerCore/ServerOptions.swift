import Foundation
import Logging
import StillwaterHummingbird
import StillwaterLive

/// A command-line argument or environment value that cannot be used: one line, for standard error.
public struct UsageError: Error, Equatable, CustomStringConvertible {
    /// What was wrong and what is expected.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// How `live-server` was asked to run: its command-line arguments and environment, checked.
public struct ServerOptions: Equatable, Sendable {
    /// A team named on the command line or in `LIVE_TEAMS`, with its token when one was given.
    public struct Team: Equatable, Sendable {
        /// The team's name: 1 to 32 lowercase letters, digits and `-`, starting with a letter or digit.
        public var name: String
        /// The team's token (16 to 256 printable ASCII characters, no spaces), or `nil` to keep the
        /// stored one (or generate one for a new team).
        public var token: String?
    }

    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The port to listen on (0 picks a free one).
    public var port = 8_080
    /// The folder holding the teams and their boards' journals.
    public var dataDirectory = "./live-data"
    /// Teams to serve besides those the data folder holds.
    public var teams: [Team] = []
    /// Origins allowed besides the server's own.
    public var origins: [String] = []
    /// The reverse proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges): a connection
    /// from one of them is logged with the client address it forwarded, any other with its own.
    public var trustedProxies: [String] = []
    /// How often clients that are behind are sent a patch (10 ms unless set): each gets at most one per
    /// interval, covering every change since its last.
    public var patchInterval: Duration = .milliseconds(10)
    /// Accepted commands between two snapshots of a board.
    public var snapshotEvery = 1_000
    /// How logs are written: human-readable lines (the default) or JSON lines (`--log-format json`, or
    /// `LIVE_LOG_FORMAT=json`), on standard error either way.
    public var logFormat = LogFormat.text
    /// The lowest level logged (`--log-level`, `LIVE_LOG_LEVEL`; `info` by default).
    public var logLevel = Logger.Level.info
    /// Whether `--help` was given.
    public var showsHelp = false
    /// Whether `--check DIR` was given: check the data folder's files and exit, serving nothing.
    public var checksOnly = false
    /// The PostgreSQL database of a cluster (`--postgres URL`): boards are replicas of its logs, and the
    /// teams and tokens are kept in it, instead of files under the data folder.
    public var postgresURL: String?

    /// With `--postgres`: how many of a board's commands before its newest snapshot the database keeps
    /// (older ones are deleted when a snapshot is written).
    public var keptActions = 10_000

    /// With `--postgres`: how often a node tells the others who is connected to its boards
    /// (`--presence-interval-ms`, 5 s unless set). The clients of a node that dies leave the others'
    /// lists within four intervals.
    public var presenceInterval: Duration = .seconds(5)

    /// Creates the defaults.
    public init() {}

    /// The boards' hub options these options ask for: the patch interval, the snapshot interval, and the
    /// board's bounds (a 4 096-byte frame, 64 commands in flight per connection).
    public var liveOptions: LiveOptions {
        LiveOptions(
            limits: LiveLimits(window: Limits.commandsInFlight, maxFrameBytes: Limits.frame),
            patchInterval: patchInterval, snapshotEvery: snapshotEvery)
    }

    /// ``liveOptions`` for `team`'s board, told to `observer` (its events named by the team).
    public func liveOptions(team: String, observer: (any LiveObserver)?) -> LiveOptions {
        var options = liveOptions
        options.observer = observer
        options.observedRoom = team
        return options
    }

    /// What `live-server --help` prints.
    public static let usage = """
        usage: live-server [--host H] [--port N] [--data DIR] [--team NAME[=TOKEN]]... [--origin URL]...
                           [--trusted-proxy ADDRESS]...
               live-server --check DIR
                           [--patch-interval-ms N] [--snapshot-every N] [--log-format text|json]
                           [--log-level LEVEL]
                           [--postgres postgres://USER@HOST:PORT/DATABASE] [--kept-actions N]
          --host H              address to listen on (default 127.0.0.1)
          --port N              port, 0 to 65535 (default 8080, or PORT from the environment; 0 picks one)
          --data DIR            where teams and boards are kept (default ./live-data, or LIVE_DATA)
          --team NAME[=TOKEN]   serve this team; with TOKEN, set its token (at least 16 characters);
                                without, keep its token or make a new one (printed once). Also
                                LIVE_TEAMS="alpha=TOKEN,beta=TOKEN". With no team anywhere, a new data
                                folder gets teams alpha and beta.
          --origin URL          also accept pages from this origin (scheme://host[:port]), e.g. a proxy
          --trusted-proxy ADDR  a reverse proxy (an IP address, or a CIDR range such as 10.0.0.0/8) whose
                                X-Forwarded-For names the client in the logs; without one, a connection
                                is logged with its own address (also LIVE_TRUSTED_PROXIES="ADDR,ADDR")
          --patch-interval-ms N how often clients behind are sent a patch, 1 to 60000 (default 10;
                                about 100 suits 1 000 clients on two cores)
          --snapshot-every N    accepted commands between two snapshots of a board (default 1000)
          --postgres URL        join a cluster: keep the boards, teams and tokens in this PostgreSQL
                                database (also LIVE_POSTGRES), shared with the other nodes (a token set on
                                one node holds on all); while it cannot be reached, wait and try again
          --check DIR           check the data folder DIR (teams.json, every journal segment and snapshot)
                                without serving or changing anything: one line per finding; exit 0 when
                                a start would open it as it is or repair only a torn tail, 1 on damage
                                (or when it cannot be checked: missing, or in use by a live-server)
          --kept-actions N      with --postgres: commands kept in the database before a board's newest
                                snapshot; older ones are deleted at each snapshot (default 10000)
          --presence-interval-ms N
                                with --postgres: how often a node tells the others who is connected to
                                it, 100 to 600000 (default 5000); a dead node's clients leave the other
                                nodes' lists within four intervals
          --log-format F        text (default: one readable line per event) or json (one JSON object per
                                line), on standard error (also LIVE_LOG_FORMAT)
          --log-level LEVEL     trace, debug, info (default), notice, warning, error or critical (also
                                LIVE_LOG_LEVEL)
        The board also answers GET /healthz (200 while the process runs), /readyz (200 when every board's
        journal writes and the database answers; 503 with the reason) and /metrics (Prometheus).
        Exit status: 0 after a shutdown (SIGTERM or SIGINT), 1 when the data folder cannot be used (in use
        by another live-server, damaged) or the database refuses, 2 for a bad argument or a port that cannot
        be listened on.
        """

    /// Reads `arguments` (without the program's name) and `environment`; arguments win over the
    /// environment.
    ///
    /// - Throws: ``UsageError`` naming the first bad argument or variable.
    public static func parse(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError) -> ServerOptions {
        var options = ServerOptions()
        if let port = environment["PORT"] { options.port = try number(port, for: "PORT", in: 0...65_535) }
        if let data = environment["LIVE_DATA"], !data.isEmpty { options.dataDirectory = data }
        if let url = environment["LIVE_POSTGRES"], !url.isEmpty { options.postgresURL = url }
        if let format = environment["LIVE_LOG_FORMAT"], !format.isEmpty { options.logFormat = try logFormat(format, from: "LIVE_LOG_FORMAT") }
        if let level = environment["LIVE_LOG_LEVEL"], !level.isEmpty { options.logLevel = try logLevel(level, from: "LIVE_LOG_LEVEL") }
        for entry in (environment["LIVE_TEAMS"] ?? "").split(separator: ",") {  // empty entries are skipped
            options.teams.append(try team(String(entry), from: "LIVE_TEAMS"))
        }
        for entry in (environment["LIVE_TRUSTED_PROXIES"] ?? "").split(separator: ",") {
            options.trustedProxies.append(try proxy(entry.trimmingCharacters(in: .whitespaces), from: "LIVE_TRUSTED_PROXIES"))
        }
        var rest = arguments[...]
        func value(_ flag: String) throws(UsageError) -> String {
            guard let value = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return value
        }
        while let argument = rest.popFirst() {
            func number(in range: ClosedRange<Int>) throws(UsageError) -> Int {
                try Self.number(try value(argument), for: argument, in: range)
            }
            switch argument {
            case "--host": options.host = try value(argument)
            case "--port": options.port = try number(in: 0...65_535)
            case "--data": options.dataDirectory = try value(argument)
            case "--team": options.teams.append(try team(try value(argument), from: argument))
            case "--origin": options.origins.append(try origin(try value(argument)))
            case "--trusted-proxy": options.trustedProxies.append(try proxy(try value(argument), from: argument))
            case "--patch-interval-ms": options.patchInterval = .milliseconds(try number(in: 1...60_000))
            case "--snapshot-every": options.snapshotEvery = try number(in: 1...10_000_000)
            case "--kept-actions": options.keptActions = try number(in: 0...100_000_000)
            case "--presence-interval-ms": options.presenceInterval = .milliseconds(try number(in: 100...600_000))
            case "--log-format": options.logFormat = try logFormat(try value(argument), from: argument)
            case "--log-level": options.logLevel = try logLevel(try value(argument), from: argument)
            case "--send-whole-board":
                throw UsageError("--send-whole-board is no longer offered: clients are always sent patches")
            case "--postgres":
                let url = try value(argument)
                guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
                    throw UsageError("--postgres must be a postgres:// URL (got \"\(url.prefix(64))\")")
                }
                options.postgresURL = url
            case "--check":
                options.dataDirectory = try value(argument)
                options.checksOnly = true
            case "--help", "-h": options.showsHelp = true
            default: throw UsageError("unknown argument \"\(argument.prefix(64))\" (see --help)")
            }
        }
        guard !options.host.isEmpty else { throw UsageError("--host must not be empty") }
        guard !options.dataDirectory.isEmpty else { throw UsageError("--data must not be empty") }
        return options
    }

    private static func number(_ text: String, for name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound) (got \"\(text.prefix(32))\")")
        }
        return value
    }

    private static func logFormat(_ text: String, from source: String) throws(UsageError) -> LogFormat {
        guard let format = LogFormat(rawValue: text) else {
            throw UsageError("\(source) must be text or json (got \"\(text.prefix(32))\")")
        }
        return format
    }

    private static func logLevel(_ text: String, from source: String) throws(UsageError) -> Logger.Level {
        guard let level = Logger.Level(rawValue: text) else {
            let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("\(source) must be one of \(levels) (got \"\(text.prefix(32))\")")
        }
        return level
    }

    private static func team(_ text: String, from source: String) throws(UsageError) -> Team {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let name = parts[0]
        guard isTeamName(name) else {
            throw UsageError("\(source): team name \"\(name.prefix(40))\" must be 1 to 32 lowercase letters, digits and -")
        }
        guard parts.count == 2 else { return Team(name: name, token: nil) }
        let token = parts[1]
        guard token.count >= 16, token.count <= 256,
              token.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw UsageError("\(source): the token for team \(name) must be 16 to 256 printable characters without spaces")
        }
        return Team(name: name, token: token)
    }

    /// Whether `name` is a usable team name.
    public static func isTeamName(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 32, first != UInt8(ascii: "-") else { return false }
        return name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }

    private static func proxy(_ text: String, from source: String) throws(UsageError) -> String {
        guard LiveEndpoint<BoardService>.Configuration.isTrustedProxy(text) else {
            throw UsageError("\(source) must be an IP address or a CIDR range such as 10.0.0.0/8 (got \"\(text.prefix(64))\")")
        }
        return text
    }

    private static func origin(_ text: String) throws(UsageError) -> String {
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
              url.host != nil, url.path.isEmpty || url.path == "/", url.query == nil
        else { throw UsageError("--origin must look like https://host or http://host:port (got \"\(text.prefix(64))\")") }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
