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
            guard case .failure = board.apply(command) else {
                Issue.record("\(command) was accepted")
                continue
            }
        }
        #expect(board == before)
        #expect(board.apply(.move(id: "i1", to: 2)) == .success(1))
        #expect(board.items.map(\.text) == ["b", "c", "a"])
        // Accepted without a visible change: no new version.
        #expect(board.apply(.rename(id: "i1", text: "a")) == .success(1))
        #expect(board.apply(.add(text: "d")) == .success(2))
        #expect(board.items.last == BoardItem(id: "i4", text: "d"))
    }

    @Test("the Authorization scheme is read in any case; other schemes give no token")
    func bearerScheme() {
        #expect(AccessPolicy.bearerToken(in: "Bearer abc") == "abc")
        #expect(AccessPolicy.bearerToken(in: "bearer abc") == "abc")
        #expect(AccessPolicy.bearerToken(in: "BEARER  abc ") == "abc")
        #expect(AccessPolicy.bearerToken(in: "Basic abc") == nil)
        #expect(AccessPolicy.bearerToken(in: "Bearer ") == nil)
        #expect(AccessPolicy.bearerToken(in: "Bearerabc") == nil)
    }

    @Test("a command id is answered once accepted: a retry is a duplicate with the first version, never applied again")
    func commandIDs() {
        var board = Board(title: "T", texts: ["a"])
        #expect(board.accept(.add(text: "b"), id: "c1") == .applied(version: 1))
        #expect(board.accept(.add(text: "b"), id: "c1") == .duplicate(version: 1))
        #expect(board.items.count == 2)
        // A refused command's id is not remembered: the same id may be sent again once it fits.
        #expect(board.accept(.toggle(id: "i9"), id: "c2") == .rejected(CommandRejection("no item with id \"i9\"")))
        #expect(board.accept(.toggle(id: "i1"), id: "c2") == .applied(version: 2))
        #expect(board.sequence == 2)
    }

    @Test("the record of command ids forgets the oldest beyond its capacity, in order")
    func recentCommandsRing() {
        var recent = RecentCommands()
        for number in 0..<(RecentCommands.capacity + 5) { recent.record("c\(number)", version: number) }
        #expect(recent.count == RecentCommands.capacity)
        #expect(recent["c4"] == nil)
        #expect(recent["c5"] == 5)
        #expect(recent["c\(RecentCommands.capacity + 4)"] == RecentCommands.capacity + 4)
    }

    @Test("command-line arguments: good ones parse, bad ones name themselves in one line")
    func serverOptions() throws {
        let options = try ServerOptions.parse(
            ["--port", "0", "--data", "/tmp/x", "--team", "alpha=0123456789abcdef", "--team", "ops", "--origin", "https://board.example.com/"],
            environment: ["PORT": "9000", "LIVE_TEAMS": "beta=fedcba9876543210"])
        #expect(options.port == 0)
        #expect(options.dataDirectory == "/tmp/x")
        #expect(options.teams.map(\.name) == ["beta", "alpha", "ops"])
        #expect(options.teams.map(\.token) == ["fedcba9876543210", "0123456789abcdef", nil])
        #expect(options.origins == ["https://board.example.com"])
        #expect(try ServerOptions.parse([], environment: ["PORT": "9000"]).port == 9000)
        let live = try ServerOptions.parse(["--patch-interval-ms", "100", "--snapshot-every", "50"]).liveOptions
        #expect(live.patchInterval == .milliseconds(100) && live.snapshotEvery == 50)
        #expect(live.limits.maxFrameBytes == Limits.frame && live.limits.window == Limits.commandsInFlight)
        let bad: [([String], [String: String], String)] = [
            (["--port", "abc"], [:], "--port must be a whole number from 0 to 65535 (got \"abc\")"),
            (["--port", "99999"], [:], "--port must be a whole number from 0 to 65535 (got \"99999\")"),
            (["--port"], [:], "--port needs a value"),
            ([], ["PORT": "99999"], "PORT must be a whole number from 0 to 65535 (got \"99999\")"),
            (["--team", "Alpha=0123456789abcdef"], [:], "--team: team name \"Alpha\" must be 1 to 32 lowercase letters, digits and -"),
            (["--team", "alpha=short"], [:], "--team: the token for team alpha must be 16 to 256 printable characters without spaces"),
            (["--origin", "evil"], [:], "--origin must look like https://host or http://host:port (got \"evil\")"),
            (["--bogus"], [:], "unknown argument \"--bogus\" (see --help)"),
            (["--send-whole-board"], [:], "--send-whole-board is no longer offered: clients are always sent patches"),
            (["--patch-interval-ms", "0"], [:], "--patch-interval-ms must be a whole number from 1 to 60000 (got \"0\")"),
        ]
        for (arguments, environment, message) in bad {
            #expect(throws: UsageError(message)) { try ServerOptions.parse(arguments, environment: environment) }
        }
    }
}
