import Foundation
import Stillwater
import Synchronization
import Testing

/// The file journal most persistence tests use: `Tally` states, `TallyAction` records.
typealias TallyJournal = FileJournal<Tally, TallyAction>

/// An effect action whose effect counts its starts (in the store's `runCounter` dependency) and sends
/// `.echoed` back, so a replay that ran effects would show in the counter and in the state.
enum EchoAction: EffectAction, Codable, Equatable, Sendable {
    case shout(String)
    case echoed(String)

    func reduce(into state: inout Tally) -> Effect<EchoAction> {
        switch self {
        case .shout(let word):
            state.items.append(word)
            return .stream { dependencies in
                dependencies.runCounter.count.add(1, ordering: .relaxed)
                return Observable.just(EchoAction.echoed(word))
            }
        case .echoed(let word):
            state.items.append("echo \(word)")
            state.count += 1
            return .none
        }
    }
}

/// Counts the effects a store started.
final class RunCounter: Sendable {
    let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
}

enum RunCounterKey: DependencyKey {
    static var defaultValue: RunCounter { RunCounter() }
}

extension Dependencies {
    var runCounter: RunCounter {
        get { self[RunCounterKey.self] }
        set { self[RunCounterKey.self] = newValue }
    }
}

/// A directory of its own under the system's temporary directory, for one test; deleted with everything
/// in it when `body` returns or throws.
func withJournalDirectory<Result>(_ body: (String) throws -> Result) rethrows -> Result {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("stillwater-journal-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// `withJournalDirectory` for an async body.
func withJournalDirectory<Result>(_ body: (String) async throws -> Result) async rethrows -> Result {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("stillwater-journal-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// The names of the files in `directory`, sorted.
func fileNames(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

/// The bytes of the file `name` in `directory` (empty when it cannot be read).
func fileBytes(_ name: String, in directory: String) -> [UInt8] {
    FileManager.default.contents(atPath: directory + "/" + name).map { Array($0) } ?? []
}

/// Replaces the file `name` in `directory` with `bytes`.
func writeFile(_ bytes: [UInt8], _ name: String, in directory: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
}

/// Every file in `directory` with its bytes, to show that an operation changed nothing.
func directoryContents(_ directory: String) -> [String: [UInt8]] {
    Dictionary(uniqueKeysWithValues: fileNames(in: directory).map { ($0, fileBytes($0, in: directory)) })
}

/// The names the journal gives a segment and a snapshot file.
func segmentName(_ first: Int) -> String { "journal-" + String(format: "%020d", first) + ".log" }
func snapshotName(_ version: Int) -> String { "snapshot-" + String(format: "%020d", version) + ".json" }

/// Opens a journal in `directory`, loads it, runs `body` with it and the version it loaded, and releases
/// it (and the directory's lock) before returning.
@discardableResult
func withLoadedJournal<Result>(
    _ directory: String, _ body: (TallyJournal, JournalContents<Tally, TallyAction>) throws -> Result
) throws -> Result {
    let journal = try TallyJournal(directory: directory)
    let contents = try journal.load()
    return try body(journal, contents)
}

/// Appends `actions` after `contents.version`, one version each, and syncs.
func append(_ actions: [TallyAction], to journal: TallyJournal, after version: Int) throws {
    for (offset, action) in actions.enumerated() {
        try journal.append(action, version: version + offset + 1)
    }
    try journal.sync()
}

/// The state `actions` make from a fresh `Tally`, reduced live in a store.
func liveState(_ actions: [TallyAction]) -> Tally {
    let store = Store(Tally())
    for action in actions { store.dispatch(action) }
    return store.state.value
}

/// A few actions of every kind, for journals to hold.
let sampleActions: [TallyAction] = [
    .increment, .add(41), .rename("ledger"), .append("milk"), .setA(3), .append("eggs \u{1F95A}"), .setB(-7),
    .increment,
]

/// The suites of the journals, under one name, so that `swift test --filter Persistence` runs them all.
@Suite("Persistence")
enum PersistenceTests {}
