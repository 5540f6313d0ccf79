import Foundation
import PollCore
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

/// `live-poll`, built beside the tests, run as a process: its command line, its clients, its shutdown.
@Suite("The live-poll program, with the Swift client over a real WebSocket")
struct PollProgramTests {
    static let secret = "a-poll-secret-0123456789"

    final class Program: Sendable {
        let process = Process()
        let output: URL

        init(_ arguments: [String], token: String? = PollProgramTests.secret) throws {
            let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            process.executableURL = directory.appendingPathComponent("live-poll")
            process.arguments = arguments
            var environment = ProcessInfo.processInfo.environment
            environment["POLL_TOKEN"] = token
            process.environment = environment
            output = FileManager.default.temporaryDirectory.appendingPathComponent("live-poll-\(UUID().uuidString).out")
            FileManager.default.createFile(atPath: output.path, contents: nil)
            let handle = try FileHandle(forWritingTo: output)
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
        }

        var text: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

        /// The port of the "listening on HOST:PORT" line.
        func port() async throws -> Int {
            for _ in 0..<600 {
                if let line = text.split(separator: "\n").first(where: { $0.contains("listening on") }),
                   let port = line.split(separator: ":").last.flatMap({ Int($0) }) { return port }
                if !process.isRunning { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw CancellationError()
        }

        /// Waits for the exit; its status and how long the wait took.
        func exit(within seconds: Double = 10) async throws -> (status: Int32, took: Duration) {
            let start = ContinuousClock.now
            while process.isRunning && ContinuousClock.now - start < .seconds(seconds) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(!process.isRunning, "live-poll still runs after \(seconds) s")
            return (process.terminationStatus, ContinuousClock.now - start)
        }
    }

    func client(port: Int, voter: String, token: String = secret) -> LiveClient<PollView, PollService.Command> {
        LiveClient(transport: LiveWebSocketTransport(url: "ws://127.0.0.1:\(port)/live"), token: token, params: ["voter": voter])
    }

    func folder() -> String { FileManager.default.temporaryDirectory.appendingPathComponent("poll-\(UUID().uuidString)").path }

    func eventually(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<300 where !condition() { try await Task.sleep(for: .milliseconds(20)) }
        #expect(condition(), "\(what)")
    }

    @Test("two clients vote; each sees both votes and only its own; SIGTERM ends the program at once with 0; a restart keeps the votes")
    func voteAndRestart() async throws {
        let data = folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        var program = try Program(["--data", data, "--port", "0", "--question", "Lunch?", "--option", "Soup", "--option", "Salad"])
        var port = try await program.port()
        let ann = client(port: port, voter: "ann"), bob = client(port: port, voter: "bob")
        #expect(try await ann.send(.init(vote: "o1")) == .applied(version: 1))
        #expect(try await bob.send(.init(vote: "o2")) == .applied(version: 2))
        if case .rejected(let message) = try await bob.send(.init(vote: "o7")) {
            #expect(message.contains("o7"))
        } else {
            Issue.record("an unknown option was not rejected")
        }
        try await eventually("ann sees both votes") { ann.view.value?.tallies.map(\.votes) == [1, 1] }
        try await eventually("bob sees both votes") { bob.view.value?.tallies.map(\.votes) == [1, 1] }
        #expect(bob.view.value?.question == "Lunch?")
        #expect(ann.view.value?.yourVote == "o1")
        #expect(bob.view.value?.yourVote == "o2")
        await ann.close()
        await bob.close()

        program.process.terminate()
        let (status, took) = try await program.exit()
        #expect(status == 0)
        #expect(took < .seconds(5))

        program = try Program(["--data", data, "--port", "0"])
        port = try await program.port()
        let carol = client(port: port, voter: "carol")
        let annAgain = client(port: port, voter: "ann")
        try await eventually("the votes survive the restart") { carol.view.value?.voters == 2 && annAgain.view.value?.voters == 2 }
        #expect(carol.view.value?.yourVote == nil)
        #expect(annAgain.view.value?.yourVote == "o1")
        await carol.close()
        await annAgain.close()
        program.process.terminate()
        _ = try await program.exit()
    }

    @Test("a wrong secret is refused: the client stops with its status final")
    func wrongSecret() async throws {
        let data = folder()
        defer { try? FileManager.default.removeItem(atPath: data) }
        let program = try Program(["--data", data, "--port", "0", "--question", "Q", "--option", "A", "--option", "B"])
        let intruder = client(port: try await program.port(), voter: "eve", token: "not-the-secret-000000")
        try await eventually("the client is refused") { intruder.status.value.isFinal }
        #expect(intruder.view.value == nil)
        await intruder.close()
        program.process.terminate()
        _ = try await program.exit()
    }

    @Test("bad command lines and environments end with status 2 and one line naming the problem", arguments: [
        (["--port", "0"], secret, "--data"),
        (["--data", "/tmp/x", "--port", "99999"], secret, "--port"),
        (["--data", "/tmp/x", "--colour", "red"], secret, "unknown option --colour"),
        (["--data", "/tmp/x"], "short", "POLL_TOKEN"),
        (["--data", "/tmp/x", "--question", "Q", "--option", "A"], secret, "two --option"),
    ])
    func badArguments(arguments: [String], token: String, expected: String) async throws {
        let program = try Program(arguments, token: token)
        let (status, _) = try await program.exit()
        #expect(status == 2)
        let lines = program.text.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("live-poll: ") && lines[0].contains(expected), "\(program.text)")
    }

    @Test("a new data folder without a question is refused with status 2, and the folder is not created")
    func emptyFolder() async throws {
        let data = folder()
        let program = try Program(["--data", data, "--port", "0"])
        let (status, _) = try await program.exit()
        #expect(status == 2)
        #expect(program.text.contains("holds no poll yet"))
        #expect(!FileManager.default.fileExists(atPath: data))
    }
}
