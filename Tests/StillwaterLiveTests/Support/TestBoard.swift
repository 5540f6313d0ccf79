import Foundation
import Stillwater
import StillwaterLive
import StillwaterTesting

/// A small list board served live in the tests: a title, items, and commands that can be refused.
struct Item: Codable, Equatable, Sendable, Diffable {
    var id: String
    var text: String
    var done = false
    var diffIdentifier: String { id }
}

struct Board: Codable, Equatable, Sendable {
    var title = "Board"
    var items: [Item] = []
    var nextID = 1
}

enum BoardCommand: Codable, Equatable, Sendable {
    case add(text: String)
    case toggle(id: String)
    case rename(id: String, text: String)
    case move(id: String, to: Int)
    case delete(id: String)
    case setTitle(String)
}

/// The actions the log records. `reduce` is total: an action that no longer fits (an item deleted by
/// another node first) changes nothing.
struct BoardAction: Action, Codable, Equatable, Sendable {
    var command: BoardCommand

    func reduce(_ board: inout Board) {
        func index(_ id: String) -> Int? { board.items.firstIndex { $0.id == id } }
        switch command {
        case .add(let text):
            board.items.append(Item(id: "i\(board.nextID)", text: text))
            board.nextID += 1
        case .toggle(let id):
            if let at = index(id) { board.items[at].done.toggle() }
        case .rename(let id, let text):
            if let at = index(id) { board.items[at].text = text }
        case .move(let id, let to):
            if let at = index(id), to >= 0, to < board.items.count { board.items.insert(board.items.remove(at: at), at: to) }
        case .delete(let id):
            if let at = index(id) { board.items.remove(at: at) }
        case .setTitle(let title):
            board.title = title
        }
    }
}

struct BoardView: LiveView {
    var title: String
    var count: Int
    var items: [Item]

    static let liveFields: [LiveField<BoardView>] = [.value("title", \.title), .value("count", \.count), .list("items", \.items)]
}

struct BoardService: LiveService {
    func view(of state: Board) -> BoardView {
        BoardView(title: state.title, count: state.items.count, items: state.items)
    }

    func decide(_ command: BoardCommand, state: Board, identity: String) -> LiveDecision<BoardAction> {
        func exists(_ id: String) -> Bool { state.items.contains { $0.id == id } }
        switch command {
        case .toggle(let id), .rename(let id, _), .delete(let id):
            guard exists(id) else { return .reject("no item with id \"\(id)\"") }
        case .move(let id, let to):
            guard exists(id) else { return .reject("no item with id \"\(id)\"") }
            guard to >= 0, to < state.items.count else { return .reject("index \(to) is out of range") }
        case .add, .setTitle:
            break
        }
        return .accept(BoardAction(command: command))
    }

    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> {
        handshake.token == "good" ? .accepted(handshake.params["user"] ?? "anonymous") : .refused("the token was refused")
    }
}

typealias BoardLog = TestLog<LiveLogState<Board>, LiveEntry<BoardAction>>
typealias BoardHub = LiveHub<BoardService>

extension BoardHub {
    static func make(log: BoardLog = BoardLog(), options: LiveOptions = LiveOptions()) async throws -> BoardHub {
        try await LiveHub.open(BoardService(), log: log, initial: Board(), options: options)
    }
}

/// A random command for a board, about half of them valid for `board`.
func randomCommand(for board: Board, using random: inout SeededRandom) -> BoardCommand {
    let ids = board.items.map(\.id) + ["missing"]
    let id = ids.randomElement(using: &random)!
    switch Int.random(in: 0..<10, using: &random) {
    case 0, 1, 2: return .add(text: "item \(Int.random(in: 0..<1000, using: &random))")
    case 3: return .toggle(id: id)
    case 4: return .rename(id: id, text: "renamed \(Int.random(in: 0..<1000, using: &random))")
    case 5, 6: return .move(id: id, to: Int.random(in: -1...max(0, board.items.count), using: &random))
    case 7, 8: return .delete(id: id)
    default: return .setTitle("title \(Int.random(in: 0..<5, using: &random))")
    }
}

/// The JSON text of a command frame.
func commandFrame(_ command: BoardCommand, ref: Int? = nil, cid: String? = nil) -> String {
    var object: [String: Any] = ["type": "command",
                                 "command": try! JSONSerialization.jsonObject(with: JSONEncoder().encode(command))]
    if let ref { object["ref"] = ref }
    if let cid { object["cid"] = cid }
    return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
}

let goodHello = #"{"type":"hello","protocol":1,"token":"good"}"#

/// Every frame a connection has to write now (none when it has nothing, without waiting); a close
/// that follows them stays to be taken.
func drain(_ connection: LiveConnection<BoardService>) async -> [String] {
    var frames: [String] = []
    while connection.queuedFrames > 0, let write = await connection.nextBatch() {
        guard let texts = write.texts else { break }
        frames += texts
    }
    return frames
}

/// Decodes a frame the server sent as a JSON object.
func object(_ frame: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(frame.utf8))) as? [String: Any] ?? [:]
}

extension LiveWrite {
    /// The frames' text, in order; nil for a close.
    var texts: [String]? {
        guard case .frames(let frames) = self else { return nil }
        return frames.map(\.text)
    }
}
