import Foundation
import LiveServerCore
import Stillwater
import StillwaterHummingbird
import StillwaterLive
import Testing

/// The board as a `LiveService` on a `LiveHub`, driven through `LiveConnection` without a network.
@Suite("The board on the live library")
struct BoardServiceTests {
    typealias Log = MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>
    static let access = LiveTokenTable(tokens: ["alpha": "alpha-secret-token", "beta": "beta-secret-token"])

    static func hub(_ board: Board = Board(title: "Groceries", texts: ["bread"])) async throws -> LiveHub<BoardService> {
        try await LiveHub.open(BoardService(team: "alpha", access: access), log: Log(), initial: board)
    }

    /// The frames of the next write that has more than `presence` frames, without those (who is on the
    /// board is `AudienceTests`' subject), or the close as `close CODE`.
    static func next(_ connection: LiveConnection<BoardService>) async -> [String] {
        await nextFrames(connection)
    }

    static func object(_ frame: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(frame.utf8)) as? [String: Any])
    }

    @Test("a client with the team's token gets a snapshot; its add is acknowledged once, patched, and a retry is a duplicate")
    func helloCommandPatch() async throws {
        let hub = try await Self.hub()
        let connection = hub.connect()
        connection.receive(#"{"type":"hello","protocol":1,"token":"alpha-secret-token"}"#)
        let opening = await Self.next(connection)
        #expect(opening.count == 2)
        #expect(try Self.object(opening[0])["type"] as? String == "welcome")
        let snapshot = try Self.object(try #require(opening.last))
        #expect(snapshot["type"] as? String == "snapshot")
        let view = try #require(snapshot["view"] as? [String: Any])
        #expect(view["title"] as? String == "Groceries")
        #expect((view["items"] as? [[String: Any]])?.map { $0["text"] as? String } == ["bread"])

        connection.receive(#"{"type":"command","ref":1,"cid":"c-1","command":{"add":{"text":"  milk  "}}}"#)
        let ack = try Self.object(try #require(await Self.next(connection).first))
        #expect(ack["type"] as? String == "ack")
        #expect(ack["ref"] as? Int == 1)
        #expect(ack["version"] as? Int == 1)
        hub.tick()
        let patch = try Self.object(try #require(await Self.next(connection).first))
        #expect(patch["type"] as? String == "patch")
        #expect(patch["from"] as? Int == 0 && patch["version"] as? Int == 1)
        #expect(hub.view.items.map(\.text) == ["bread", "milk"])

        connection.receive(#"{"type":"command","ref":2,"cid":"c-1","command":{"add":{"text":"milk"}}}"#)
        let duplicate = try Self.object(try #require(await Self.next(connection).first))
        #expect(duplicate["duplicate"] as? Bool == true)
        #expect(duplicate["version"] as? Int == 1)
        #expect(hub.view.items.count == 2)
        await hub.close()
    }

    @Test("a patch's items are the ListPatch of the change, and its title is set")
    func patchMatchesBoardFrame() async throws {
        let before = Board(title: "T", texts: ["a", "b", "c", "d"])
        let hub = try await Self.hub(before)
        let connection = hub.connect()
        connection.receive(#"{"type":"hello","protocol":1,"token":"alpha-secret-token"}"#)
        _ = await Self.next(connection)
        let commands: [BoardCommand] = [.move(id: "i4", to: 0), .rename(id: "i2", text: "b!"), .delete(id: "i3"),
                                        .add(text: "e"), .setTitle("U")]
        for (index, command) in commands.enumerated() {
            #expect(await hub.perform(command, as: .member("alpha")) == .applied(version: index + 1))
        }
        hub.tick()
        let patch = try Self.object(try #require(await Self.next(connection).first))
        let lists = try #require(patch["lists"] as? [String: Any])
        let set = try #require(patch["set"] as? [String: Any])
        let board = try Self.object(String(decoding: JSONEncoder().encode(ListPatch(from: before.items, to: hub.view.items)), as: UTF8.self))
        #expect((lists["items"] as? NSDictionary)?.isEqual(to: board) == true)
        #expect(set["title"] as? String == "U")
        #expect(hub.view.items.map(\.text) == ["d", "a", "b!", "e"])
        await hub.close()
    }

    @Test("a wrong token, another team's, or none is refused with 4401; a bearer header handed over by the transport is admitted")
    func authentication() async throws {
        // An access policy of its own: this test replaces a token.
        let access = LiveTokenTable(tokens: ["alpha": "alpha-secret-token", "beta": "beta-secret-token"])
        let hub = try await LiveHub.open(BoardService(team: "alpha", access: access), log: Log(), initial: Board(title: "T"))
        for hello in [#"{"type":"hello","protocol":1,"token":"wrong-token-0000000"}"#,
                      #"{"type":"hello","protocol":1,"token":"beta-secret-token"}"#,
                      #"{"type":"hello","protocol":1}"#] {
            let connection = hub.connect()
            connection.receive(hello)
            let error = try Self.object(try #require(await Self.next(connection).first))
            #expect(error["code"] as? String == "unauthorized")
            #expect(await Self.next(connection) == ["close 4401"])
        }
        let viaHeader = hub.connect(transport: ["authorization": "bearer alpha-secret-token"])
        viaHeader.receive(#"{"type":"hello","protocol":1}"#)
        #expect(try Self.object(try #require(await Self.next(viaHeader).first))["type"] as? String == "welcome")
        // A replaced token counts from the next hello on.
        access.replaceDigests(["alpha": LiveTokens.digest(of: "alpha-new-token-000")])
        let old = hub.connect()
        old.receive(#"{"type":"hello","protocol":1,"token":"alpha-secret-token"}"#)
        #expect(try Self.object(try #require(await Self.next(old).first))["code"] as? String == "unauthorized")
        let new = hub.connect()
        new.receive(#"{"type":"hello","protocol":1,"token":"alpha-new-token-000"}"#)
        #expect(try Self.object(try #require(await Self.next(new).first))["type"] as? String == "welcome")
        await hub.close()
    }

    @Test("commands that do not fit the board or the limits are rejected with the reason, and change nothing")
    func rejections() async throws {
        let hub = try await Self.hub()
        let cases: [(BoardCommand, String)] = [
            (.toggle(id: "i9"), #"no item with id "i9""#),
            (.move(id: "i1", to: 1), "index 1 is out of range 0..<1"),
            (.add(text: "   "), #""text" is empty"#),
            (.setTitle(String(repeating: "t", count: Limits.title + 1)),
             #""title" has 101 characters, over the limit of 100"#),
            (.delete(id: String(repeating: "x", count: 33)), #""id" is too long"#),
        ]
        for (command, message) in cases {
            #expect(await hub.perform(command, as: .member("alpha")) == .rejected(message))
        }
        #expect(hub.version == 0)
        #expect(hub.view == LiveBoardView(title: "Groceries", items: [BoardItem(id: "i1", text: "bread")]))
        #expect(await hub.perform(.setTitle("  Weekend "), as: .member("alpha")) == .applied(version: 1))
        #expect(hub.view.title == "Weekend")
        await hub.close()
    }

    @Test("a command frame's command reads as its case and labels, setTitle's value named title, and decodes back")
    func commandJSON() async throws {
        let cases: [(BoardCommand, String)] = [
            (.add(text: "milk"), #"{"add":{"text":"milk"}}"#),
            (.toggle(id: "i1"), #"{"toggle":{"id":"i1"}}"#),
            (.rename(id: "i1", text: "oat milk"), #"{"rename":{"id":"i1","text":"oat milk"}}"#),
            (.move(id: "i2", to: 0), #"{"move":{"id":"i2","to":0}}"#),
            (.delete(id: "i1"), #"{"delete":{"id":"i1"}}"#),
            (.setTitle("Weekend"), #"{"setTitle":{"title":"Weekend"}}"#),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for (command, json) in cases {
            #expect(String(decoding: try encoder.encode(command), as: UTF8.self) == json)
            #expect(try JSONDecoder().decode(BoardCommand.self, from: Data(json.utf8)) == command)
        }
        // Sent by a client in the library's command frame, it is applied.
        let hub = try await Self.hub()
        let client = hub.connect()
        client.receive(#"{"type":"hello","protocol":1,"token":"alpha-secret-token"}"#)
        _ = await Self.next(client)
        client.receive(#"{"type":"command","ref":1,"cid":"t1","command":{"setTitle":{"title":"Weekend"}}}"#)
        var types: [String] = []
        for _ in 0..<4 where !types.contains("ack") {
            types += try await Self.next(client).map { try Self.object($0)["type"] as? String ?? "?" }
        }
        #expect(types.contains("ack"), "\(types)")
        #expect(hub.view.title == "Weekend")
        await hub.close()
    }

    @Test("a board full of items refuses an add; an item deleted by an earlier command is refused to a later one")
    func boardState() async throws {
        let hub = try await Self.hub(Board(title: "Full", texts: (1...Limits.items).map { "item \($0)" }))
        #expect(await hub.perform(.add(text: "one more"), as: .member("alpha")) == .rejected("the board is full (\(Limits.items) items)"))
        #expect(await hub.perform(.delete(id: "i1"), as: .member("alpha")) == .applied(version: 1))
        #expect(await hub.perform(.toggle(id: "i1"), as: .member("alpha")) == .rejected(#"no item with id "i1""#))
        #expect(await hub.perform(.add(text: "one more"), as: .member("alpha")) == .applied(version: 2))
        #expect(hub.view.items.last?.id == "i\(Limits.items + 1)")
        await hub.close()
    }

    @Test("a refused token is reported with the team and the client's address; an accepted one is not")
    func refusalsReported() async {
        let lines = Locked<[String]>([])
        let service = BoardService(team: "alpha", access: Self.access) { line in lines.withLock { $0.append(line) } }
        _ = await service.authenticate(LiveHandshake(token: "alpha-secret-token", transport: ["address": "203.0.113.7"]))
        _ = await service.authenticate(LiveHandshake(token: "beta-secret-token", transport: ["address": "203.0.113.7"]))
        _ = await service.authenticate(LiveHandshake(token: nil))
        #expect(lines.withLock { $0 } == ["team alpha: a token was refused (client 203.0.113.7)",
                                          "team alpha: a token was refused (client unknown)"])
    }

    @Test("the board reopens from its file journal with its items and stream, and a retried cid is a duplicate")
    func fileJournalRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("board-live-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = BoardService(team: "alpha", access: Self.access)
        let stream: String
        do {
            let journal = try FileJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(directory: directory)
            let hub = try await LiveHub.open(service, log: journal, initial: Board(title: "Groceries"))
            stream = hub.stream
            #expect(await hub.perform(.add(text: "milk"), cid: "m1", as: .member("alpha")) == .applied(version: 1))
            #expect(await hub.perform(.rename(id: "i1", text: "oat milk"), cid: "r1", as: .member("alpha")) == .applied(version: 2))
            await hub.close()
        }
        let journal = try FileJournal<LiveLogState<Board>, LiveEntry<BoardAction>>(directory: directory)
        let hub = try await LiveHub.open(service, log: journal, initial: Board(title: "never used"))
        #expect(hub.stream == stream)
        #expect(hub.version == 2)
        #expect(await hub.perform(.add(text: "milk"), cid: "m1", as: .member("alpha")) == .duplicate(version: 1))
        #expect(hub.view == LiveBoardView(title: "Groceries", items: [BoardItem(id: "i1", text: "oat milk", addedBy: "Member")]))
        await hub.close()
    }
}
