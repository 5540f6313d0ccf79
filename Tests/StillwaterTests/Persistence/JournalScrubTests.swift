import Foundation
import Testing
@testable import Stillwater

extension PersistenceTests {
    /// Opening checks every file kept, not only what it replays; `verify` reports without changing.
    @Suite("FileJournal scrub and verify")
    struct JournalScrubTests {
        /// Snapshots at 2 and 4, records 1-5: segment 3 (versions 3-4) is wholly covered by the newest
        /// snapshot and kept only for falling back to the older one.
        func writeTwoSnapshots(_ directory: String) throws -> Tally {
            try FileJournalRepairTests().writeTwoSnapshots(directory)
        }

        func flip(_ name: String, at index: (Int) -> Int, in directory: String) throws {
            var bytes = fileBytes(name, in: directory)
            bytes[index(bytes.count)] ^= 0x08
            try writeFile(bytes, name, in: directory)
        }

        @Test("a changed byte in a segment the newest snapshot covers is corrupt at open, and verify reports it, changing nothing")
        func damagedCoveredSegment() throws {
            try withJournalDirectory { directory in
                _ = try writeTwoSnapshots(directory)
                try flip(segmentName(3), at: { _ in 30 }, in: directory)
                let before = directoryContents(directory)
                let report = try TallyJournal.verify(directory: directory)
                #expect(report.damage.count == 1)
                #expect(report.damage.first?.kind == .corrupt)
                #expect(report.damage.first?.path == directory + "/" + segmentName(3))
                let error = try #require(throws: JournalError.self) { try withLoadedJournal(directory) { _, _ in } }
                #expect(error == report.damage.first)
                #expect(directoryContents(directory) == before)
            }
        }

        @Test("a damaged older snapshot is set aside with a warning, the newest is used, and no record is lost")
        func damagedOlderSnapshot() throws {
            try withJournalDirectory { directory in
                let expected = try writeTwoSnapshots(directory)
                try flip(snapshotName(2), at: { $0 - 2 }, in: directory)
                let report = try TallyJournal.verify(directory: directory)
                #expect(report.damage.isEmpty)
                #expect(report.repairs.count == 1)
                #expect(report.repairs.first?.contains(snapshotName(2)) == true)
                let contents = try withLoadedJournal(directory) { $1 }
                #expect(contents.snapshot?.version == 4)
                #expect(contents.replayed(onto: Tally()) == expected)
                #expect(contents.warnings.count == 1)
                #expect(fileNames(in: directory).contains { $0.hasPrefix(snapshotName(2) + ".damaged-") })
            }
        }

        @Test("with both snapshots damaged and the early records gone, open is corrupt and nothing is moved")
        func bothSnapshotsDamaged() throws {
            try withJournalDirectory { directory in
                _ = try writeTwoSnapshots(directory)
                try flip(snapshotName(2), at: { _ in 3 }, in: directory)
                try flip(snapshotName(4), at: { $0 - 1 }, in: directory)
                let before = directoryContents(directory)
                let report = try TallyJournal.verify(directory: directory)
                #expect(report.damage.map(\.kind) == [.corrupt])
                #expect(report.repairs.count == 2)
                #expect(throws: JournalError.self) { try withLoadedJournal(directory) { _, _ in } }
                #expect(directoryContents(directory) == before)
            }
        }

        @Test("verify lists damage in every segment, reports a torn end as a repair, and changes nothing")
        func verifyListsEverything() throws {
            try withJournalDirectory { directory in
                _ = try writeTwoSnapshots(directory)
                let intact = try TallyJournal.verify(directory: directory)
                #expect(intact == JournalVerification(damage: [], repairs: [], version: 5))
                try writeFile(fileBytes(segmentName(5), in: directory) + [1, 2, 3], segmentName(5), in: directory)
                let torn = try TallyJournal.verify(directory: directory)
                #expect(torn.damage.isEmpty)
                #expect(torn.repairs.count == 1)
                #expect(torn.repairs.first?.contains("3 bytes after the last commit mark") == true)
                try flip(segmentName(3), at: { _ in 20 }, in: directory)
                try flip(segmentName(5), at: { _ in 20 }, in: directory)
                let before = directoryContents(directory)
                let damaged = try TallyJournal.verify(directory: directory)
                #expect(damaged.damage.map(\.path) == [directory + "/" + segmentName(3), directory + "/" + segmentName(5)])
                #expect(directoryContents(directory) == before)
            }
        }

        @Test("verify refuses a directory a journal has open")
        func verifyLocked() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { _, _ in
                    let error = try #require(throws: JournalError.self) { try TallyJournal.verify(directory: directory) }
                    #expect(error.kind == .locked)
                }
                #expect(try TallyJournal.verify(directory: directory).damage.isEmpty)
            }
        }
    }
}
