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
        #expect(board.view == before.view)
        #expect(board.rejectedCount == 5)
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
            .snapshot(BoardView(version: 3, title: "T", items: old)),
            .patch(version: 4, title: "U", items: ListPatch(from: old, to: new)),
            .patch(version: 5, title: nil, items: ListPatch(from: old, to: new)),
            .patch(version: 6, title: "V", items: nil),
            .ack(ref: 7, version: 6),
            .error(message: "no", ref: nil),
            .error(message: "no", ref: 8),
        ]
        for frame in frames {
            #expect(try ServerFrame.decode(frame.encoded()) == frame)
        }
        var replica = BoardReplica()
        try replica.apply(frames[0])
        try replica.apply(frames[1])
        #expect(replica.view == BoardView(version: 4, title: "U", items: new))
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
