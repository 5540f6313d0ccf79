import Foundation
import StillwaterTesting
import Testing
@testable import Stillwater

/// How a test damages the end of the last segment, as a crash in the middle of a write would.
enum TornEnd: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Two bytes of the next record's length field.
    case midLength
    /// A whole header and half the payload of the next record.
    case midPayload
    /// A whole record after the last commit mark, without a mark of its own.
    case unmarkedRecord
    /// Random bytes after the last whole record.
    case garbage

    var testDescription: String { rawValue }
}

extension PersistenceTests {
    @Suite("FileJournal repairs")
    struct FileJournalRepairTests {
        /// Writes records 1-3 to a fresh journal in `directory` and returns the segment's bytes.
        func writeThreeRecords(_ directory: String) throws -> [UInt8] {
            try withLoadedJournal(directory) { journal, _ in
                try append([.add(1), .append("two"), .add(3)], to: journal, after: 0)
            }
            return fileBytes(segmentName(1), in: directory)
        }

        @Test("a torn end of the last segment is cut back to the last whole record, kept in a .torn file, with a warning", arguments: TornEnd.allCases)
        func tornEnd(_ damage: TornEnd) throws {
            try withJournalDirectory { directory in
                let whole = try writeThreeRecords(directory)
                var next: [UInt8] = []
                JournalFormat.appendRecord(version: 4, payload: Array(#"{"increment":{}}"#.utf8), to: &next)
                let damaged: [UInt8]
                let cutAt: Int
                let survivors: [TallyAction]
                switch damage {
                case .midLength:
                    (damaged, cutAt, survivors) = (whole + next.prefix(2), whole.count, [.add(1), .append("two"), .add(3)])
                case .midPayload:
                    (damaged, cutAt, survivors) = (whole + next.prefix(20), whole.count, [.add(1), .append("two"), .add(3)])
                case .unmarkedRecord:
                    (damaged, cutAt, survivors) = (whole + next, whole.count, [.add(1), .append("two"), .add(3)])
                case .garbage:
                    var random = SeededRandom(seed: 7)
                    let noise = (0..<100).map { _ in UInt8.random(in: .min ... .max, using: &random) }
                    (damaged, cutAt, survivors) = (whole + noise, whole.count, [.add(1), .append("two"), .add(3)])
                }
                try writeFile(damaged, segmentName(1), in: directory)

                try withLoadedJournal(directory) { journal, contents in
                    #expect(contents.records.map(\.action) == survivors)
                    #expect(contents.warnings.count == 1)
                    let warning = try #require(contents.warnings.first)
                    #expect(warning.contains(directory + "/" + segmentName(1) + ", offset \(cutAt):"))
                    #expect(warning.contains("cut \(damaged.count - cutAt) bytes"))
                    let tornFiles = fileNames(in: directory).filter { $0.hasPrefix(segmentName(1) + ".torn-") }
                    #expect(tornFiles.count == 1)
                    #expect(tornFiles.first.map { fileBytes($0, in: directory) } == Array(damaged[cutAt...]))
                    #expect(fileBytes(segmentName(1), in: directory) == Array(damaged[..<cutAt]))
                    try append([.append("after")], to: journal, after: contents.version)
                }
                let reloaded = try withLoadedJournal(directory) { $1 }
                #expect(reloaded.warnings.isEmpty)
                #expect(reloaded.records.map(\.action) == survivors + [.append("after")])
            }
        }

        /// Records 1-3 in segment 1, a snapshot at 2 (so segment 1 is still read), records 4-5 in segment 4.
        func writeTwoSegments(_ directory: String) throws {
            try withLoadedJournal(directory) { journal, _ in
                try append([.add(1), .add(2), .add(3)], to: journal, after: 0)
                try journal.writeSnapshot(liveState([.add(1), .add(2)]), version: 2)
                try append([.add(4), .add(5)], to: journal, after: 3)
            }
            #expect(fileNames(in: directory) == [segmentName(1), segmentName(4), "lock", snapshotName(2)])
        }

        @Test("a bad record in a segment before the last is corrupt, and nothing is changed", arguments: ["checksum", "cut short"])
        func damageBeforeTheLastSegment(_ damage: String) throws {
            try withJournalDirectory { directory in
                try writeTwoSegments(directory)
                var bytes = fileBytes(segmentName(1), in: directory)
                let lastRecord = try #require(JournalFormat.scanSegment(bytes, first: 1)?.frames.last)
                if damage == "checksum" { bytes[lastRecord.payload.lowerBound] ^= 1 } else { bytes.removeLast(3) }
                try writeFile(bytes, segmentName(1), in: directory)
                let before = directoryContents(directory)

                let error = try #require(throws: JournalError.self) { try withLoadedJournal(directory) { _, _ in } }
                #expect(error.kind == .corrupt)
                #expect(error.path == directory + "/" + segmentName(1))
                // A cut-short segment ends inside its last commit mark, right after the last record.
                #expect(error.offset == (damage == "checksum" ? lastRecord.offset : lastRecord.payload.upperBound))
                #expect(error.description.contains("not the last one"))
                #expect(directoryContents(directory) == before)
            }
        }

        @Test("versions with a gap between the snapshot and the records are corrupt, naming the missing versions")
        func versionGap() throws {
            try withJournalDirectory { directory in
                try writeTwoSegments(directory)
                try FileManager.default.removeItem(atPath: directory + "/" + segmentName(1))
                try FileManager.default.removeItem(atPath: directory + "/" + snapshotName(2))
                let error = try #require(throws: JournalError.self) { try withLoadedJournal(directory) { _, _ in } }
                #expect(error.kind == .corrupt)
                #expect(error.path == directory + "/" + segmentName(4))
                #expect(error.description.contains("versions 1 to 3 are missing"))
            }
        }

        /// Snapshots at 2 and 4, records 1-5; the segment of versions 1-2 is deleted by the second snapshot.
        func writeTwoSnapshots(_ directory: String) throws -> Tally {
            let actions: [TallyAction] = [.add(1), .append("a"), .add(3), .append("b"), .rename("five")]
            try withLoadedJournal(directory) { journal, _ in
                try append(Array(actions[0..<2]), to: journal, after: 0)
                try journal.writeSnapshot(liveState(Array(actions[0..<2])), version: 2)
                try append(Array(actions[2..<4]), to: journal, after: 2)
                try journal.writeSnapshot(liveState(Array(actions[0..<4])), version: 4)
                try append([actions[4]], to: journal, after: 4)
            }
            #expect(fileNames(in: directory) == [
                segmentName(3), segmentName(5), "lock", snapshotName(2), snapshotName(4),
            ])
            return liveState(actions)
        }

        @Test("a damaged newest snapshot is moved aside with a warning, and the older one and its records are loaded")
        func damagedNewestSnapshot() throws {
            try withJournalDirectory { directory in
                let expected = try writeTwoSnapshots(directory)
                var bytes = fileBytes(snapshotName(4), in: directory)
                bytes[bytes.count - 3] ^= 0x01
                try writeFile(bytes, snapshotName(4), in: directory)

                try withLoadedJournal(directory) { journal, contents in
                    #expect(contents.snapshot?.version == 2)
                    #expect(contents.records.map(\.version) == [3, 4, 5])
                    #expect(contents.replayed(onto: Tally()) == expected)
                    #expect(contents.warnings.count == 1)
                    #expect(contents.warnings.first?.contains(directory + "/" + snapshotName(4)) == true)
                    #expect(contents.warnings.first?.contains("checksum") == true)
                    let names = fileNames(in: directory)
                    #expect(!names.contains(snapshotName(4)))
                    #expect(names.contains { $0.hasPrefix(snapshotName(4) + ".damaged-") })
                    // The next snapshot keeps the one at 2 as the older of two, so its records stay.
                    try journal.writeSnapshot(expected, version: 5)
                }
                let reloaded = try withLoadedJournal(directory) { $1 }
                #expect(reloaded.warnings.isEmpty)
                #expect(reloaded.snapshot == JournalSnapshot(version: 5, state: expected))
            }
        }

        @Test("when every snapshot is damaged and the early records are gone, load is corrupt and moves nothing")
        func everySnapshotDamaged() throws {
            try withJournalDirectory { directory in
                _ = try writeTwoSnapshots(directory)
                for version in [2, 4] {
                    var bytes = fileBytes(snapshotName(version), in: directory)
                    bytes[0] = UInt8(ascii: "X")
                    try writeFile(bytes, snapshotName(version), in: directory)
                }
                let before = directoryContents(directory)
                let error = try #require(throws: JournalError.self) { try withLoadedJournal(directory) { _, _ in } }
                #expect(error.kind == .corrupt)
                #expect(error.description.contains("versions 1 to 2 are missing"))
                #expect(directoryContents(directory) == before)
            }
        }

        @Test("random bytes named like a segment are a clear corrupt error, never a trap", arguments: [0, 3, 8, 64, 4096])
        func garbageSegment(_ count: Int) throws {
            try withJournalDirectory { directory in
                var random = SeededRandom(seed: UInt64(count))
                let noise = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try writeFile(noise, segmentName(1), in: directory)
                let error = try #require(throws: JournalError.self) { try withLoadedJournal(directory) { _, _ in } }
                #expect(error.kind == .corrupt)
                #expect(error.description == "\(directory)/\(segmentName(1)), offset 0: not a journal segment: it starts with neither SWJRNL02 nor SWJRNL01")
            }
        }

        @Test("random bytes named like a snapshot are set aside with a warning, and the records load from version 0")
        func garbageSnapshot() throws {
            try withJournalDirectory { directory in
                _ = try writeThreeRecords(directory)
                var random = SeededRandom(seed: 11)
                try writeFile((0..<300).map { _ in UInt8.random(in: .min ... .max, using: &random) }, snapshotName(3), in: directory)
                let contents = try withLoadedJournal(directory) { $1 }
                #expect(contents.snapshot == nil)
                #expect(contents.records.count == 3)
                #expect(contents.warnings.count == 1)
                #expect(contents.warnings.first?.contains("no snapshot header line") == true)
            }
        }
    }
}
