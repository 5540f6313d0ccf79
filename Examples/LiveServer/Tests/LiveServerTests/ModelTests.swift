import Foundation
import LiveServerCore
import Stillwater
import StillwaterTesting
import Testing

@Suite("Commands, board and frames")
struct ModelTests {
    @Test("client frames decode to commands, and encode back")
    func clientFrames() throws {
        let frames: [ClientFrame] = [
            ClientFrame(command: .add(text: "milk"), ref: 1),
            ClientFrame(command: .toggle(id: "i1")),
            ClientFrame(command: .rename(id: "i2", text: "eggs"), ref: 3),
            ClientFrame(command: .move(id: "i3", to: 0)),
            ClientFrame(command: .delete(id: "i4")),
            ClientFrame(command: .setTitle("Shopping")),
        ]
        for frame in frames {
            #expect(try ClientFrame.decode(frame.encoded()) == frame)
        }
        #expect(try ClientFrame.decode(#"{"type":"add","text":"  padded  ","extra":true}"#)
            == ClientFrame(command: .add(text: "padded")))
    }

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

    @Test("server frames survive a round trip through their JSON")
    func serverFrames() throws {
        let old = [BoardItem(id: "a", text: "1"), BoardItem(id: "b", text: "2"), BoardItem(id: "c", text: "3")]
        let new = [BoardItem(id: "c", text: "3"), BoardItem(id: "a", text: "1!"), BoardItem(id: "d", text: "4")]
        let frames: [ServerFrame] = [
            .snapshot(BoardView(version: 3, title: "T", items: old), board: "b-1"),
            .patch(from: 3, version: 4, title: "U", items: ListPatch(from: old, to: new)),
            .patch(from: 4, version: 5, title: nil, items: ListPatch(from: old, to: new)),
            .patch(from: 5, version: 6, title: "V", items: nil),
            .ack(ref: 7, version: 6),
            .ack(ref: 9, version: 6, duplicate: true),
            .error(message: "no", ref: nil),
            .error(message: "no", ref: 8),
            .error(message: "later", ref: 8, retry: true),
            .error(message: "who?", ref: nil, code: "unauthorized"),
        ]
        for frame in frames {
            #expect(try ServerFrame.decode(frame.encoded()) == frame)
        }
        var replica = BoardReplica()
        try replica.apply(frames[0])
        try replica.apply(frames[1])
        #expect(replica.view == BoardView(version: 4, title: "U", items: new))
        #expect(replica.board == "b-1")
        // A patch from a version the replica does not have is refused, and changes nothing.
        #expect(throws: CommandRejection.self) { try replica.apply(frames[3]) }
        #expect(replica.view?.version == 4)
    }

    @Test("frames are standard JSON: Foundation reads them, and a patch's items are the library's ListPatch JSON")
    func framesAreStandardJSON() throws {
        let old = [BoardItem(id: "a", text: "1"), BoardItem(id: "b", text: "2"), BoardItem(id: "c", text: "3")]
        let new = [BoardItem(id: "c", text: "quote \" slash \\ tab \t nl \n bell \u{07} é 🚀"), BoardItem(id: "a", text: "1"),
                   BoardItem(id: "d", text: "4", done: true)]
        let patch = ListPatch(from: old, to: new)
        let text = ServerFrame.patch(from: 1, version: 2, title: "T \u{2028}", items: patch).encoded()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["title"] as? String == "T \u{2028}")
        let items = try JSONSerialization.data(withJSONObject: try #require(object["items"]))
        #expect(try JSONDecoder().decode(ListPatch<BoardItem>.self, from: items) == patch)
        let snapshot = ServerFrame.snapshot(BoardView(version: 3, title: "S", items: new), board: "b-2").encoded()
        let decoded = try JSONSerialization.jsonObject(with: Data(snapshot.utf8)) as? [String: Any]
        #expect((decoded?["items"] as? [[String: Any]])?.first?["text"] as? String == new[0].text)
    }

    @Test("the frame reader takes every JSON escape and refuses what is not JSON, without trapping")
    func jsonReader() throws {
        #expect(try ServerFrame.decode(#"{"type":"error","message":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude80"}"#)
            == .error(message: "a\"b\\c/d\u{08}\u{0C}\n\r\té🚀", ref: nil))
        #expect(try ServerFrame.decode(#" { "type" : "ack" , "ref" : 1 , "version" : 2e0 } "#) == .ack(ref: 1, version: 2))
        let bad = ["", "{", "{}x", #"{"type":"ack","ref":01,"version":1}"#, #"{"type":"ack","ref":1.5,"version":1}"#,
                   #"{"type":"error","message":"\ud83d"}"#, #"{"type":"error","message":"\x"}"#, "[" + String(repeating: "[", count: 100),
                   #"{"type":"error","message":"tab\#tin"}"#, "nul", #"{"type":"patch","from":1,"version":2,"items":{"changes":{"inserts":[0]},"elements":[]}}"#]
        for text in bad {
            #expect(throws: CommandRejection.self, "\(text.prefix(40))") { try ServerFrame.decode(text) }
        }
    }

    @Test("a decode error echoes the frame's ref whenever the frame is a JSON object with one")
    func decodeErrorsEchoRef() {
        for (text, ref) in [(#"{"type":"add","ref":3}"#, 3), (#"{"type":"add","text":42,"ref":4}"#, 4),
                            (#"{"type":"nope","ref":5}"#, 5), (#"{"type":"add","text":"x","cid":"bad cid!","ref":6}"#, 6),
                            (#"{"type":"hello","token":"x","ref":7}"#, 7)] {
            #expect(throws: CommandRejection.self) { try ClientFrame.decode(text) }
            do {
                _ = try ClientFrame.decode(text)
            } catch {
                #expect(error.ref == ref, "\(text)")
            }
        }
        do {
            _ = try ClientFrame.decode("not json")
        } catch {
            #expect(error.ref == nil)
        }
    }

    @Test("a frame that is not whole JSON still has its ref echoed when one can be read before the damage")
    func brokenFramesEchoRef() {
        let cases: [(String, Int?)] = [
            (#"{"type":"add","ref":7,"text":"cut sho"#, 7), (#"{"ref" : -12 , "type":"add",}"#, -12),
            (#"{"text":"a \"ref\": 3","ref":8,"#, 8), (#"{"type":"add","ref":9"#, nil), (#"{"ref":1.5,"#, nil),
            (#"{"nested":{"ref":3},"#, nil), (#"[{"ref":3},"#, nil), (#"{"type":"ref":4,"#, nil), ("{", nil),
        ]
        for (text, ref) in cases {
            do {
                _ = try ClientFrame.decode(text)
                Issue.record("decoded \(text)")
            } catch {
                #expect(error.ref == ref, "\(text)")
            }
        }
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
        let bad: [([String], [String: String], String)] = [
            (["--port", "abc"], [:], "--port must be a whole number from 0 to 65535 (got \"abc\")"),
            (["--port", "99999"], [:], "--port must be a whole number from 0 to 65535 (got \"99999\")"),
            (["--port"], [:], "--port needs a value"),
            ([], ["PORT": "99999"], "PORT must be a whole number from 0 to 65535 (got \"99999\")"),
            (["--team", "Alpha=0123456789abcdef"], [:], "--team: team name \"Alpha\" must be 1 to 32 lowercase letters, digits and -"),
            (["--team", "alpha=short"], [:], "--team: the token for team alpha must be 16 to 256 printable characters without spaces"),
            (["--origin", "evil"], [:], "--origin must look like https://host or http://host:port (got \"evil\")"),
            (["--bogus"], [:], "unknown argument \"--bogus\" (see --help)"),
        ]
        for (arguments, environment, message) in bad {
            #expect(throws: UsageError(message)) { try ServerOptions.parse(arguments, environment: environment) }
        }
    }

    @Test("tokens are compared by digest, and origins must be the request's own or listed")
    func accessPolicy() {
        let policy = AccessPolicy(tokens: ["alpha": "alpha-secret-token"], extraOrigins: ["https://proxy.example"])
        #expect(policy.allows(team: "alpha", token: "alpha-secret-token"))
        #expect(!policy.allows(team: "alpha", token: "alpha-secret-tokeN"))
        #expect(!policy.allows(team: "alpha", token: ""))
        #expect(!policy.allows(team: "beta", token: "alpha-secret-token"))
        #expect(policy.allowsOrigin(nil, authority: "127.0.0.1:8080"))
        #expect(policy.allowsOrigin("http://127.0.0.1:8080", authority: "127.0.0.1:8080"))
        #expect(policy.allowsOrigin("https://proxy.example", authority: "10.0.0.1:8080"))
        #expect(policy.allowsOrigin("HTTPS://Proxy.Example", authority: "10.0.0.1:8080"))
        #expect(AccessPolicy(tokens: [:], extraOrigins: ["https://Board.Example"]).allowsOrigin("https://board.example", authority: nil))
        #expect(!policy.allowsOrigin("http://evil.example", authority: "127.0.0.1:8080"))
        #expect(!policy.allowsOrigin("http://127.0.0.1:8081", authority: "127.0.0.1:8080"))
        #expect(!policy.allowsOrigin("null", authority: "127.0.0.1:8080"))
        #expect(AccessPolicy.newToken().count == 43)
        #expect(AccessPolicy.newToken() != AccessPolicy.newToken())
    }

    @Test("the page's JavaScript applies patches exactly as ListPatch does (runs when node is installed)")
    func javaScriptPortMatches() throws {
        guard let node = findExecutable("node") else {
            // CI installs node (.ci/run), so there a missing node is a failure, not a skip.
            if ProcessInfo.processInfo.environment["CI"] != nil {
                Issue.record("node is not installed, and CI is set: the JavaScript check cannot run")
            } else {
                print("node is not installed: the JavaScript check is skipped")
            }
            return
        }
        let page = try String(contentsOf: pageURL(), encoding: .utf8)
        guard let start = page.range(of: "function applyListPatch"),
              let end = page.range(of: "\nfunction startBoard")
        else {
            Issue.record("applyListPatch not found in index.html")
            return
        }
        let function = String(page[start.lowerBound..<end.lowerBound])
        var random = SeededRandom(seed: 42)
        var cases: [(old: [BoardItem], patch: ListPatch<BoardItem>, new: [BoardItem])] = []
        for _ in 0..<300 {
            let old = randomList(using: &random)
            var new = old.shuffled(using: &random).filter { _ in Int.random(in: 0..<5, using: &random) > 0 }
            for index in new.indices where Int.random(in: 0..<4, using: &random) == 0 { new[index].done.toggle() }
            for number in 0..<Int.random(in: 0..<4, using: &random) {
                new.insert(BoardItem(id: "n\(number)", text: "new"), at: Int.random(in: 0...new.count, using: &random))
            }
            cases.append((old, ListPatch(from: old, to: new), new))
        }
        let encoder = JSONEncoder()
        let input = try cases.map { item in
            "[\(String(decoding: try encoder.encode(item.old), as: UTF8.self)), "
                + "\(String(decoding: try encoder.encode(item.patch), as: UTF8.self))]"
        }.joined(separator: ",\n")
        // Patches that do not fit: the script must throw, not produce a list.
        let bad = #"""
            [[{"id":"a","text":"1","done":false}], {"changes":{"deletes":[1]},"elements":[]}],
            [[{"id":"a","text":"1","done":false}], {"changes":{"deletes":[0],"updates":[0]},"elements":[{"id":"a","text":"2","done":false}]}],
            [[{"id":"a","text":"1","done":false}], {"changes":{"inserts":[0]},"elements":[]}],
            [[{"id":"a","text":"1","done":false}], {"changes":{"inserts":[5]},"elements":[{"id":"b","text":"2","done":false}]}],
            [[], {"changes":{"moves":[[0,0]]},"elements":[{"id":"b","text":"2","done":false}]}]
            """#
        let script = function + """
            const cases = [\(input)];
            const bad = [\(bad)];
            const results = cases.map(([list, patch]) => applyListPatch(list, patch));
            const refused = bad.map(([list, patch]) => { try { applyListPatch(list, patch); return false; } catch (e) { return true; } });
            console.log(JSON.stringify({ results, refused }));
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("listpatch-\(getpid()).js")
        try script.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = node
        process.arguments = [file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        struct Output: Decodable { var results: [[BoardItem]]; var refused: [Bool] }
        let decoded = try JSONDecoder().decode(Output.self, from: output)
        #expect(decoded.results.count == cases.count)
        for (result, item) in zip(decoded.results, cases) {
            #expect(result == item.new)
            #expect(try item.patch.applied(to: item.old) == result)
        }
        #expect(decoded.refused == [true, true, true, true, true])
    }
}

func randomList(using random: inout SeededRandom) -> [BoardItem] {
    (0..<Int.random(in: 0..<12, using: &random)).map { BoardItem(id: "o\($0)", text: "t\($0)") }
}

/// The page's source file.
func pageURL() -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/LiveServerCore/Public/index.html")
}

/// The first executable called `name` on the PATH.
func findExecutable(_ name: String) -> URL? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let url = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return nil
}
