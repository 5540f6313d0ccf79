import Foundation
import LiveServerCore
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

/// The real `live-server` program: arguments, listening, shutdown, crashes and restarts.
@Suite("The live-server program", .serialized)
struct ProcessTests {
    static let token = "process-test-token-0001"

    @Test("a bad port or argument is one line on standard error and exit status 2",
          arguments: [(["--port", "abc"], [String: String]()), (["--port", "99999"], [:]), (["--port", "-1"], [:]),
                      ([], ["PORT": "99999"]), (["--team", "x=short"], [:]), (["--frobnicate"], [:]),
                      (["--postgres", "mysql://db/x"], [:]), (["--postgres", "postgres://127.0.0.1/db"], [:])])
    func badArguments(arguments: [String], environment: [String: String]) async throws {
        try await withDataFolder { folder in
            let server = try ServerProcess(arguments + ["--data", folder], environment: environment)
            defer { server.stop() }
            let (status, _) = try await server.exit(within: 30)
            #expect(status == 2)
            let lines = server.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(server.stderr)")
            #expect(lines.first?.hasPrefix("live-server: ") == true)
            #expect(server.stdout.isEmpty)
        }
    }

    @Test("a node whose database cannot be reached waits, one line per attempt with growing waits, and SIGTERM ends it at once")
    func unreachableDatabaseWaits() async throws {
        try await withDataFolder { folder in
            let server = try ServerProcess(
                ["--postgres", "postgres://postgres@127.0.0.1:1/postgres", "--data", folder, "--team", "alpha=\(Self.token)"])
            defer { server.stop() }
            try await eventually(within: 30, "three attempts reported") { server.stderr.split(separator: "\n").count >= 3 }
            #expect(server.process.isRunning)
            let lines = server.stderr.split(separator: "\n")
            for (number, line) in lines.prefix(3).enumerated() {
                #expect(line.hasPrefix("live-server: the database cannot be reached (no connection); attempt \(number + 1), trying again in "), "\(line)")
            }
            server.send(SIGTERM)
            let (status, took) = try await server.exit(within: 10)
            #expect(status == 0)
            #expect(took < .seconds(2), "took \(took)")
            #expect(server.stdout.contains("stopped before starting"))
        }
    }

    @Test("a node started while its database is down waits, and serves once the database starts (runs with LIVE_POSTGRES_URL)",
          .enabled(if: ProcessInfo.processInfo.environment["LIVE_POSTGRES_URL"] != nil))
    func databaseComesLater() async throws {
        try await withDataFolder { folder in
            let port = try freePort()
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("postgres.sh").path
            let database = folder + "-pg"
            defer { try? runCommand("/bin/bash", [script, "stop", database]) }
            let server = try ServerProcess(
                ["--port", "0", "--postgres", "postgres://postgres@127.0.0.1:\(port)/postgres", "--data", folder,
                 "--team", "alpha=\(Self.token)"])
            defer { server.stop() }
            try await eventually(within: 30, "two attempts reported") { server.stderr.split(separator: "\n").count >= 2 }
            try await onOwnThread { try runCommand("/bin/bash", [script, "start", database, String(port)]) }
            let serving = try await server.port(within: 60)
            let client = try await connectedClient(port: serving, token: Self.token)
            await client.close()
            // Once serving, SIGTERM is a shutdown as for any server.
            server.send(SIGTERM)
            let (status, took) = try await server.exit(within: 10)
            #expect(status == 0)
            #expect(took < .seconds(4), "took \(took)")
            #expect(server.stdout.contains("live-server: stopped\n"), "\(server.stdout)")
        }
    }

    @Test("a port already in use is one line on standard error and exit status 2")
    func portInUse() async throws {
        try await withDataFolder { folder in
            let first = try ServerProcess(["--port", "0", "--data", folder + "/a", "--team", "alpha=\(Self.token)"])
            defer { first.stop() }
            let port = try await first.port()
            let second = try ServerProcess(["--port", String(port), "--data", folder + "/b", "--team", "alpha=\(Self.token)"])
            defer { second.stop() }
            let (status, _) = try await second.exit(within: 30)
            #expect(status == 2)
            let lines = second.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(second.stderr)")
            #expect(lines.first?.contains("cannot listen on 127.0.0.1:\(port)") == true, "\(second.stderr)")
            #expect(lines.first?.contains("in use") == true, "\(second.stderr)")
        }
    }

    @Test("a first start prints each new team's share link and viewer link once; a restart keeps the token and prints none")
    func firstStartTokens() async throws {
        try await withDataFolder { folder in
            let first = try ServerProcess(["--port", "0", "--data", folder])
            defer { first.stop() }
            let port = try await first.port()
            try await eventually("both share links and both viewer links") { first.stdout.components(separatedBy: "#token=").count == 5 }
            let link = try #require(first.stdout.split(separator: "\n").first { $0.contains("share link") && $0.contains("?team=alpha#token=") })
            let token = String(try #require(link.split(separator: "#token=").last))
            let viewerLink = try #require(first.stdout.split(separator: "\n").first { $0.contains("viewer link") && $0.contains("?team=alpha#token=") })
            #expect(String(try #require(viewerLink.split(separator: "#token=").last)) == ViewerTokens.token(forMemberToken: token))
            let client = try await connectedClient(port: port, token: token)
            #expect(client.view.value?.title == "Team Alpha")
            await client.close()
            first.send(SIGTERM)
            #expect(try await first.exit(within: 10).status == 0)
            let registry = try String(contentsOfFile: folder + "/teams.json", encoding: .utf8)
            #expect(!registry.contains(token))
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/teams.json")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)

            let second = try ServerProcess(["--port", "0", "--data", folder])
            defer { second.stop() }
            let secondPort = try await second.port()
            #expect(!second.stdout.contains("#token="))
            let again = try await connectedClient(port: secondPort, token: token)
            await again.close()
        }
    }

    @Test("SIGTERM with idle, never-upgraded and half-open connections exits within 5 s, closing WebSockets with 1001")
    func shutdownIsPrompt() async throws {
        try await withDataFolder { folder in
            let server = try ServerProcess(["--port", "0", "--data", folder, "--team", "alpha=\(Self.token)"])
            defer { server.stop() }
            let port = try await server.port()
            let idle = try RawConnection(port: port)
            let halfRequest = try RawConnection(port: port, sending: "GET / HTTP/1.1\r\nHost: x\r\n")
            // Upgraded, then never reads nor answers the close handshake.
            let halfOpen = try RawConnection(port: port, sending: upgradeRequest(
                port: port, path: "/live?team=alpha", headers: ["Authorization": "Bearer \(Self.token)"]))
            let client = RawClient(port: port, team: "alpha", token: Self.token)
            try await client.wait(for: "the snapshot") { frames($0, ofType: "snapshot").count == 1 }
            try await Task.sleep(for: .milliseconds(200))
            server.send(SIGTERM)
            let (status, took) = try await server.exit(within: 10)
            #expect(status == 0)
            // The never-used connections are closed at the signal, the WebSockets with a close frame.
            #expect(took < .seconds(5), "took \(took)")
            #expect(try await client.closedLog().closeCode == .goingAway)
            #expect(server.stdout.hasSuffix("live-server: stopped\n"), "\(server.stdout)")
            _ = (idle, halfRequest, halfOpen)
        }
    }

    @Test("a second live-server on a data folder in use is refused in one line naming the first one's pid, and changes no file")
    func lockedFolderChangesNothing() async throws {
        try await withDataFolder { folder in
            let first = try ServerProcess(["--port", "0", "--data", folder, "--team", "alpha=\(Self.token)"])
            defer { first.stop() }
            _ = try await first.port()
            let before = try Self.files(in: folder)
            // A new token for alpha and a new team: a start that got further would rewrite teams.json.
            let second = try ServerProcess(["--port", "0", "--data", folder, "--team", "alpha=another-token-00000001", "--team", "gamma"])
            defer { second.stop() }
            let (status, _) = try await second.exit(within: 30)
            #expect(status == 1)
            let lines = second.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(second.stderr)")
            #expect(lines.first?.contains("used by another live-server (pid \(first.process.processIdentifier))") == true, "\(second.stderr)")
            #expect(try Self.files(in: folder) == before)
        }
    }

    /// Every file under `folder` with its content and modification time.
    static func files(in folder: String) throws -> [String: FileState] {
        var files: [String: FileState] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let name = enumerator?.nextObject() as? String {
            let path = folder + "/" + name
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            files[name] = FileState(
                content: try Data(contentsOf: URL(fileURLWithPath: path)), modified: attributes[.modificationDate] as? Date)
        }
        return files
    }

    struct FileState: Equatable {
        var content: Data
        var modified: Date?
    }

    @Test("kill -9 under load, then a restart: no acknowledged command lost, none applied twice")
    func killUnderLoad() async throws {
        try await withDataFolder { folder in
            let arguments = ["--data", folder, "--team", "alpha=\(Self.token)", "--snapshot-every", "50"]
            let server = try ServerProcess(["--port", "0"] + arguments)
            defer { server.stop() }
            let port = try await server.port()
            // Four clients add uniquely named items, each with its own command id, as fast as answered.
            let sent = Locked<[String: String]>([:])  // cid -> text
            let acknowledged = Locked<Set<String>>([])
            var clients: [RawClient] = []
            for _ in 0..<4 { clients.append(RawClient(port: port, team: "alpha", token: Self.token)) }
            let senders = clients.enumerated().map { number, client in
                Task {
                    for step in 0..<120 {
                        let cid = "c\(number)-\(step)", text = "client \(number) item \(step)"
                        sent.withLock { $0[cid] = text }
                        guard (try? await client.perform(.add(text: text), cid: cid))?["type"] as? String == "ack" else { return }
                        acknowledged.withLock { _ = $0.insert(cid) }
                        if Task.isCancelled { return }
                    }
                }
            }
            try await eventually(within: 60, "some commands acknowledged") { acknowledged.withLock { $0.count } >= 60 }
            server.send(SIGKILL)
            _ = try await server.exit(within: 10)
            for sender in senders { sender.cancel() }
            for client in clients { await client.close() }
            let acked = acknowledged.withLock { $0 }

            let restarted = try ServerProcess(["--port", "0"] + arguments)
            defer { restarted.stop() }
            let newPort = try await restarted.port()
            let viewer = try await connectedClient(port: newPort, token: Self.token)
            let checker = RawClient(port: newPort, team: "alpha", token: Self.token)
            let texts = sent.withLock { $0 }
            let afterRestart = try #require(viewer.view.value).items.map(\.text)
            for cid in acked {
                #expect(afterRestart.filter { $0 == texts[cid] }.count == 1, "acknowledged \(cid) lost or doubled")
            }
            // Every command sent again with its id: those applied before the crash are answered, not applied.
            for (cid, text) in texts.sorted(by: { $0.key < $1.key }) {
                let reply = try await checker.perform(.add(text: text), cid: cid)
                guard reply["type"] as? String == "ack" else {
                    Issue.record("\(cid): \(reply)")
                    continue
                }
                if acked.contains(cid) { #expect(reply["duplicate"] as? Bool == true, "\(cid) was applied twice") }
            }
            try await eventually("the viewer's copy caught up") { viewer.view.value?.items.count == texts.count + 4 }
            let final = try #require(viewer.view.value).items.map(\.text)
            for text in texts.values { #expect(final.filter { $0 == text }.count == 1, "\(text)") }
            await checker.close()
            await viewer.close()
        }
    }
}

/// `live-server --check DIR`: the data folder checked without serving it or changing a file.
@Suite("live-server --check", .serialized)
struct CheckTests {
    /// A folder whose board alpha has `commands` accepted commands in its journal, written by the board
    /// itself (no snapshot after them), and whose teams.json names alpha.
    static func folder(_ folder: String, commands: Int) async throws {
        let server = try ServerProcess(["--port", "0", "--data", folder, "--team", "alpha=\(ProcessTests.token)"])
        _ = try await server.port()
        server.send(SIGTERM)
        _ = try await server.exit(within: 30)
        let journal = try BoardJournal(directory: DataFolder(path: folder).journalDirectory(team: "alpha"))
        let board = try await LiveHub.open(
            BoardService(team: "alpha", access: LiveTokenTable(tokens: [:])), log: journal, initial: Board(title: "unused"),
            options: LiveOptions(snapshotEvery: 1_000_000))
        for index in 0..<commands {
            guard case .applied = await board.perform(.add(text: "item \(index)"), as: .member("alpha")) else {
                throw TestFailure("command \(index) was not applied")
            }
        }
    }

    /// The newest segment of alpha's journal (the file that holds the commands just written).
    static func newestSegment(in folder: String) throws -> String {
        let directory = DataFolder(path: folder).journalDirectory(team: "alpha")
        let segments = try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { $0.hasPrefix("journal-") && $0.hasSuffix(".log") }
            .sorted()
        guard let last = segments.last else {
            throw TestFailure("no segment in \(try FileManager.default.contentsOfDirectory(atPath: directory))")
        }
        return directory + "/" + last
    }

    @Test("a sound folder: exit 0, one line on standard output, no file changed")
    func soundFolder() async throws {
        try await withDataFolder { folder in
            try await Self.folder(folder, commands: 20)
            let before = try ProcessTests.files(in: folder)
            let check = try ServerProcess(["--check", folder])
            let (status, _) = try await check.exit(within: 30)
            #expect(status == 0, "\(check.stderr)")
            #expect(check.stderr.isEmpty, "\(check.stderr)")
            #expect(check.stdout.contains("no damage"), "\(check.stdout)")
            #expect(try ProcessTests.files(in: folder) == before)
        }
    }

    @Test("a byte flipped in the middle of the last segment: exit 1, a line naming the segment, no file changed")
    func damagedSegment() async throws {
        try await withDataFolder { folder in
            try await Self.folder(folder, commands: 20)
            let segment = try Self.newestSegment(in: folder)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
            bytes[bytes.count / 2] ^= 0x5A
            try bytes.write(to: URL(fileURLWithPath: segment))
            let before = try ProcessTests.files(in: folder)
            let check = try ServerProcess(["--check", folder])
            let (status, _) = try await check.exit(within: 30)
            #expect(status == 1)
            let lines = check.stderr.split(separator: "\n")
            #expect(lines.count >= 1 && lines.allSatisfy { $0.hasPrefix("live-server: team alpha: ") }, "\(check.stderr)")
            #expect(check.stderr.contains(segment), "\(check.stderr)")
            #expect(try ProcessTests.files(in: folder) == before)
            // And a start refuses the folder the same way, changing nothing.
            let server = try ServerProcess(["--port", "0", "--data", folder])
            defer { server.stop() }
            let (startStatus, _) = try await server.exit(within: 30)
            #expect(startStatus == 1, "\(server.stderr)")
            #expect(try ProcessTests.files(in: folder).filter { $0.key != "live-server.lock" }
                    == before.filter { $0.key != "live-server.lock" })
        }
    }

    @Test("a folder of an older live-server (teams.json without its format): a check and a start exit 1 with one line, no file changed")
    func olderFolder() async throws {
        try await withDataFolder { folder in
            try await Self.folder(folder, commands: 3)
            let registry = URL(fileURLWithPath: folder + "/teams.json")
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: registry)) as? [String: Any])
            #expect(object["format"] as? Int == 3)
            object["format"] = nil
            try JSONSerialization.data(withJSONObject: object).write(to: registry)
            let before = try ProcessTests.files(in: folder).filter { $0.key != "live-server.lock" }
            let check = try ServerProcess(["--check", folder])
            let (status, _) = try await check.exit(within: 30)
            #expect(status == 1)
            #expect(check.stderr == "live-server: \(folder) was written by an older live-server, whose boards this one "
                + "cannot read; start it with a fresh data folder (nothing was changed)\n")
            let server = try ServerProcess(["--port", "0", "--data", folder, "--team", "gamma=\(ProcessTests.token)"])
            defer { server.stop() }
            let (startStatus, _) = try await server.exit(within: 30)
            #expect(startStatus == 1, "\(server.stderr)")
            #expect(server.stderr.split(separator: "\n").count == 1, "\(server.stderr)")
            #expect(server.stderr.contains("older live-server"), "\(server.stderr)")
            #expect(try ProcessTests.files(in: folder).filter { $0.key != "live-server.lock" } == before)
        }
    }

    @Test("a damaged teams.json and a missing folder: exit 1 with one line each")
    func damagedTeamsAndMissingFolder() async throws {
        try await withDataFolder { folder in
            try await Self.folder(folder, commands: 1)
            try Data("{\"teams\": [".utf8).write(to: URL(fileURLWithPath: folder + "/teams.json"))
            let check = try ServerProcess(["--check", folder])
            let (status, _) = try await check.exit(within: 30)
            #expect(status == 1)
            #expect(check.stderr.contains("teams.json"), "\(check.stderr)")
            let missing = try ServerProcess(["--check", folder + "/nothing-here"])
            let (missingStatus, _) = try await missing.exit(within: 30)
            #expect(missingStatus == 1)
            #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        }
    }
}
