import Foundation
import LiveServerCore
import Stillwater
import StillwaterTesting
import Testing

@Suite("Commands, board and command line")
struct ModelTests {
    @Test("the board refuses commands that do not fit it, and changes nothing then")
    func boardRefuses() {
        var board = Board(title: "T", texts: ["a", "b", "c"])
        let before = board
        for command: BoardCommand in [.toggle(id: "x"), .rename(id: "x", text: "y"), .delete(id: "i9"),
                                      .move(id: "i1", to: 3), .move(id: "i1", to: -1)] {
            #expect(board.rejection(of: command) != nil, "\(command)")
            board.apply(command)
        }
        #expect(board == before)
        board.apply(.move(id: "i1", to: 2))
        #expect(board.items.map(\.text) == ["b", "c", "a"])
        board.apply(.add(text: "d"))
        #expect(board.items.last == BoardItem(id: "i4", text: "d"))
    }

    @Test("command-line arguments: good ones parse, bad ones name themselves in one line")
    func serverOptions() throws {
        let options = try ServerOptions.parse(
            ["--port", "0", "--data", "/tmp/x", "--team", "alpha=0123456789abcdef", "--team", "ops", "--origin", "https://board.example.com/",
             "--trusted-proxy", "10.0.0.0/8"],
            environment: ["PORT": "9000", "LIVE_TEAMS": "beta=fedcba9876543210", "LIVE_TRUSTED_PROXIES": "127.0.0.1, ::1"])
        #expect(options.port == 0)
        #expect(options.dataDirectory == "/tmp/x")
        #expect(options.teams.map(\.name) == ["beta", "alpha", "ops"])
        #expect(options.teams.map(\.token) == ["fedcba9876543210", "0123456789abcdef", nil])
        #expect(options.origins == ["https://board.example.com"])
        #expect(options.trustedProxies == ["127.0.0.1", "::1", "10.0.0.0/8"])
        #expect(try ServerOptions.parse([], environment: ["PORT": "9000"]).port == 9000)
        let live = try ServerOptions.parse(["--patch-interval-ms", "100", "--snapshot-every", "50"]).liveOptions
        #expect(live.patchInterval == .milliseconds(100) && live.snapshotEvery == 50)
        #expect(live.limits.maxFrameBytes == Limits.frame && live.limits.window == Limits.commandsInFlight)
        #expect(try ServerOptions.parse([]).presenceInterval == .seconds(5))
        #expect(try ServerOptions.parse(["--presence-interval-ms", "250"]).presenceInterval == .milliseconds(250))
        let bad: [([String], [String: String], String)] = [
            (["--port", "abc"], [:], "--port must be a whole number from 0 to 65535 (got \"abc\")"),
            (["--port", "99999"], [:], "--port must be a whole number from 0 to 65535 (got \"99999\")"),
            (["--port"], [:], "--port needs a value"),
            ([], ["PORT": "99999"], "PORT must be a whole number from 0 to 65535 (got \"99999\")"),
            (["--team", "Alpha=0123456789abcdef"], [:], "--team: team name \"Alpha\" must be 1 to 32 lowercase letters, digits and -"),
            (["--team", "alpha=short"], [:], "--team: the token for team alpha must be 16 to 256 printable characters without spaces"),
            (["--origin", "evil"], [:], "--origin must look like https://host or http://host:port (got \"evil\")"),
            (["--trusted-proxy", "proxy.internal"], [:],
             "--trusted-proxy must be an IP address or a CIDR range such as 10.0.0.0/8 (got \"proxy.internal\")"),
            ([], ["LIVE_TRUSTED_PROXIES": "10.0.0.0/33"],
             "LIVE_TRUSTED_PROXIES must be an IP address or a CIDR range such as 10.0.0.0/8 (got \"10.0.0.0/33\")"),
            (["--bogus"], [:], "unknown argument \"--bogus\" (see --help)"),
            (["--send-whole-board"], [:], "--send-whole-board is no longer offered: clients are always sent patches"),
            (["--patch-interval-ms", "0"], [:], "--patch-interval-ms must be a whole number from 1 to 60000 (got \"0\")"),
            (["--presence-interval-ms", "50"], [:], "--presence-interval-ms must be a whole number from 100 to 600000 (got \"50\")"),
        ]
        for (arguments, environment, message) in bad {
            #expect(throws: UsageError(message)) { try ServerOptions.parse(arguments, environment: environment) }
        }
    }
}
