import Foundation
import Stillwater

// `benchmarks --journal-group-commit`: how many appended commands one flush covers in a FileJournal,
// with 1, 10 and 100 tasks appending at once. A count, not a timing: the flushes are counted from the
// segment files afterwards (every completed flush of records ends its batch with one commit mark, see
// FileJournal's "Files"), so the measurement needs nothing inside the journal and runs the same against
// any version of it. Not part of the speed gate; the seconds are printed for orientation only.

/// The action the measurement appends: one small record each.
struct GroupCommitAdd: Action, Codable, Sendable {
    var amount: Int
    func reduce(_ total: inout Int) { total += amount }
}

/// One row of the table.
struct GroupCommitRow {
    var appenders: Int
    var appends: Int
    var flushes: Int
    var seconds: Double
}

/// Appends `total` single-entry commands from `appenders` concurrent tasks (each appending its share one
/// after another, as a client's commands arrive) to a new FileJournal in a fresh directory under
/// `parent`, then counts the flushes.
func measureGroupCommit(appenders: Int, total: Int, parent: String) async throws -> GroupCommitRow {
    let directory = parent + "/stillwater-group-commit-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let appends = total / appenders * appenders
    let clock = ContinuousClock()
    var elapsed = Duration.zero
    do {
        let journal = try FileJournal<Int, GroupCommitAdd>(directory: directory)
        _ = try await journal.open()
        let log: any ActionLog<Int, GroupCommitAdd> = journal
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for appender in 0..<appenders {
                group.addTask {
                    for index in 0..<(appends / appenders) {
                        _ = try await log.append([GroupCommitAdd(amount: appender + index)])
                    }
                }
            }
            try await group.waitForAll()
        }
        elapsed = clock.now - start
    }
    let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".log") }
    var flushes = 0
    var records = 0
    for name in names {
        let counted = countBatches(in: [UInt8](FileManager.default.contents(atPath: directory + "/" + name) ?? Data()))
        flushes += counted.marks
        records += counted.records
    }
    guard records == appends else { fatalError("group commit: found \(records) records in the segments, appended \(appends)") }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return GroupCommitRow(appenders: appenders, appends: appends, flushes: flushes, seconds: seconds)
}

/// The commit marks and records of a segment (format `SWJRNL02`): after the 8-byte magic, records (4-byte
/// length, 4-byte CRC, 8-byte version, payload) and 16-byte commit marks (length field `FF FF FF FF`).
func countBatches(in bytes: [UInt8]) -> (marks: Int, records: Int) {
    var offset = 8
    var marks = 0
    var records = 0
    while offset + 4 <= bytes.count {
        let length = bytes[offset..<(offset + 4)].reversed().reduce(0) { $0 << 8 | Int($1) }
        if length == 0xFFFF_FFFF {
            marks += 1
            offset += 16
        } else {
            records += 1
            offset += 16 + length
        }
    }
    return (marks, records)
}

/// Runs the measurement for 1, 10 and 100 appenders, in the temporary directory, and prints a markdown
/// table.
func runGroupCommitMeasurement(total: Int) async throws {
    let parent = FileManager.default.temporaryDirectory.path(percentEncoded: false)
    print("| concurrent appenders | commands | flushes | commands per flush | seconds |")
    print("|---:|---:|---:|---:|---:|")
    for appenders in [1, 10, 100] {
        let row = try await measureGroupCommit(appenders: appenders, total: total, parent: parent)
        let perFlush = Double(row.appends) / Double(max(row.flushes, 1))
        print("| \(row.appenders) | \(row.appends) | \(row.flushes) | \(String(format: "%.1f", perFlush)) | \(String(format: "%.2f", row.seconds)) |")
    }
}
