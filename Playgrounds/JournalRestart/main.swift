// How long a FileJournal takes to restart: opening, reading (and checking) its files, and replaying the
// records after the newest snapshot, for a board of 100 000 commands with a snapshot every 1 000 (the
// live board's default). Run it in release:
//
//     swift run -c release --scratch-path .build-release journal-restart [commands] [snapshot-every]
//
// It prints the median of seven restarts, the files' sizes, and what was replayed.
import Foundation
import Stillwater

/// A card board: the state the live board example keeps, reduced to its shape.
struct Board: Codable, Sendable, Equatable {
    struct Card: Codable, Sendable, Equatable {
        var title: String
        var column: Int
    }
    var cards: [Card] = []
}

enum BoardCommand: Action, Codable, Sendable {
    case add(title: String)
    case move(card: Int, column: Int)
    case rename(card: Int, title: String)

    func reduce(_ board: inout Board) {
        switch self {
        case .add(let title): board.cards.append(Board.Card(title: title, column: 0))
        case .move(let card, let column) where board.cards.indices.contains(card): board.cards[card].column = column
        case .rename(let card, let title) where board.cards.indices.contains(card): board.cards[card].title = title
        default: break
        }
    }
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let commands = arguments.first ?? 100_000
let snapshotEvery = arguments.dropFirst().first ?? 1_000
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-restart-\(UUID().uuidString)").path
defer { try? FileManager.default.removeItem(atPath: directory) }

// Write the journal: batches of 100 commands per sync, a snapshot every `snapshotEvery`.
do {
    let journal = try FileJournal<Board, BoardCommand>(directory: directory)
    _ = try journal.load()
    var board = Board()
    for version in 1...commands {
        let command: BoardCommand = switch version % 10 {
        case 0, 1: .add(title: "card \(version)")
        case 2...6: .move(card: (version * 7919) % max(1, board.cards.count), column: version % 4)
        default: .rename(card: (version * 104_729) % max(1, board.cards.count), title: "renamed at \(version)")
        }
        command.reduce(&board)
        try journal.append(command, version: version)
        if version % 100 == 0 || version == commands { try journal.sync() }
        if snapshotEvery > 0, version % snapshotEvery == 0 { try journal.writeSnapshot(board, version: version) }
    }
}

let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
let bytes = files.reduce(0) { total, name in
    total + ((try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int) ?? 0)
}

var times: [Double] = []
var replayed = 0
var cards = 0
for _ in 0..<7 {
    let start = ContinuousClock.now
    let journal = try FileJournal<Board, BoardCommand>(directory: directory)
    let contents = try journal.load()
    let board = contents.replayed(onto: Board())
    let elapsed = ContinuousClock.now - start
    times.append(Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)
    replayed = contents.records.count
    cards = board.cards.count
}
times.sort()
print("commands \(commands), snapshot every \(snapshotEvery): restart median \(String(format: "%.1f", times[3])) ms (min \(String(format: "%.1f", times[0])), max \(String(format: "%.1f", times[6]))); \(files.count) files, \(bytes) bytes; replayed \(replayed) records onto a snapshot of \(cards) cards")
