import Foundation
import StillwaterTesting
import Testing
@testable import Stillwater

extension PersistenceTests {
    /// Damage (a changed byte in something that was synced) against a torn write (the unsynced end of the
    /// last segment): the first is refused, the second cut.
    @Suite("FileJournal damage and torn writes")
    struct JournalDamageTests {
        /// Five syncs of one record each into segment 1: five batches, each ended by a commit mark.
        func writeFiveBatches(_ directory: String) throws -> [TallyAction] {
            let actions: [TallyAction] = [.add(1), .append("two"), .add(3), .rename("four"), .add(5)]
            try withLoadedJournal(directory) { journal, _ in
                for (index, action) in actions.enumerated() {
                    try append([action], to: journal, after: index)
                }
            }
            return actions
        }

        /// Loads `directory` expecting `.corrupt` at `offset` in `name`, and checks that nothing changed.
        func expectCorrupt(_ directory: String, _ name: String, offset: Int?, _ comment: Comment? = nil) throws {
            let before = directoryContents(directory)
            let error = try #require(throws: JournalError.self, comment) { try withLoadedJournal(directory) { _, _ in } }
            #expect(error.kind == .corrupt, comment)
            #expect(error.path == directory + "/" + name, comment)
            if let offset { #expect(error.offset == offset, comment) }
            #expect(directoryContents(directory) == before, comment)
        }

        @Test("a changed byte in the first, a middle or the last record of the last segment is corrupt, with its offset, and nothing changes", arguments: [0, 2, 4])
        func damagedRecordInLastSegment(_ index: Int) throws {
            try withJournalDirectory { directory in
                _ = try writeFiveBatches(directory)
                var bytes = fileBytes(segmentName(1), in: directory)
                let frame = try #require(JournalFormat.scanSegment(bytes, first: 1)?.frames[index])
                bytes[frame.payload.lowerBound + 1] ^= 0x01
                try writeFile(bytes, segmentName(1), in: directory)
                // The last record's batch is the last synced one: its commit mark was written, so it
                // may have been acknowledged, and a bad byte before that mark is damage too.
                try expectCorrupt(directory, segmentName(1), offset: frame.offset)
                let error = try #require(throws: JournalError.self) { try withLoadedJournal(directory) { _, _ in } }
                #expect(error.reason.contains(index == 4 ? "ends in the batch's commit mark" : "a valid commit mark follows"))
                #expect(error.reason.contains("not a torn write"))
            }
        }

        @Test("any one changed byte anywhere in a synced last segment is corrupt, never cut", arguments: [0x01, 0x80, 0xFF])
        func everyByteOfLastSegment(_ mask: Int) throws {
            try withJournalDirectory { directory in
                _ = try writeFiveBatches(directory)
                let original = fileBytes(segmentName(1), in: directory)
                for index in original.indices {
                    var bytes = original
                    bytes[index] ^= UInt8(mask)
                    try writeFile(bytes, segmentName(1), in: directory)
                    try expectCorrupt(directory, segmentName(1), offset: nil, "byte \(index)")
                }
            }
        }

        @Test("any one changed byte in a segment before the last is corrupt, and nothing changes")
        func everyByteOfOlderSegment() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    try append([.add(1), .add(2)], to: journal, after: 0)
                    try append([.add(3)], to: journal, after: 2)
                    try journal.writeSnapshot(liveState([.add(1)]), version: 1)
                    try append([.add(4)], to: journal, after: 3)
                }
                #expect(fileNames(in: directory) == [segmentName(1), segmentName(4), "lock", snapshotName(1)])
                let original = fileBytes(segmentName(1), in: directory)
                for index in original.indices {
                    var bytes = original
                    bytes[index] ^= 0x10
                    try writeFile(bytes, segmentName(1), in: directory)
                    try expectCorrupt(directory, segmentName(1), offset: nil, "byte \(index)")
                }
            }
        }

        @Test("the unsynced end of the last segment, cut or zero-filled at any byte, is cut back to the last commit mark, losing no synced record", arguments: [false, true])
        func tornAtEveryByte(_ zeroFilled: Bool) throws {
            try withJournalDirectory { directory in
                let actions = try writeFiveBatches(directory)
                let synced = fileBytes(segmentName(1), in: directory)
                // The bytes the next sync writes: two records and their commit mark.
                try withLoadedJournal(directory) { journal, contents in
                    try append([.append("six"), .add(7)], to: journal, after: contents.version)
                }
                let whole = fileBytes(segmentName(1), in: directory)
                #expect(whole.count > synced.count + 2 * 16 + 16)
                for end in synced.count..<whole.count {
                    let torn = zeroFilled
                        ? Array(whole[..<end]) + [UInt8](repeating: 0, count: whole.count - end)
                        : Array(whole[..<end])
                    try writeFile(torn, segmentName(1), in: directory)
                    for name in fileNames(in: directory) where name.contains(".torn-") {
                        try FileManager.default.removeItem(atPath: directory + "/" + name)
                    }
                    let contents = try withLoadedJournal(directory) { $1 }
                    // Zeros from inside the mark's version on can be what was written (7 is one byte).
                    if torn == whole {
                        #expect(contents.records.map(\.action) == actions + [.append("six"), .add(7)], "cut at \(end)")
                        #expect(contents.warnings.isEmpty)
                        continue
                    }
                    #expect(contents.records.map(\.action) == actions, "cut at \(end)")
                    #expect(contents.warnings.count == (torn.count > synced.count ? 1 : 0), "cut at \(end)")
                    #expect(fileBytes(segmentName(1), in: directory) == synced, "cut at \(end)")
                }
            }
        }

        @Test("a journal written in the first format (no commit marks) loads, goes on in a new segment with marks, and keeps the first format's torn-end rule")
        func firstFormatLoads() throws {
            try withJournalDirectory { directory in
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                var bytes = JournalFormat.firstFormatMagic
                for (index, action) in sampleActions.prefix(3).enumerated() {
                    JournalFormat.appendRecord(version: index + 1, payload: try JSONEncoder().encode(action), to: &bytes)
                }
                let whole = bytes
                bytes += [9, 0, 0]   // a torn header
                try writeFile(bytes, segmentName(1), in: directory)

                try withLoadedJournal(directory) { journal, contents in
                    #expect(contents.records.map(\.action) == Array(sampleActions.prefix(3)))
                    #expect(contents.warnings.count == 1)
                    #expect(fileBytes(segmentName(1), in: directory) == whole)
                    try append([.append("next")], to: journal, after: 3)
                }
                #expect(fileNames(in: directory).filter { $0.hasSuffix(".log") } == [segmentName(1), segmentName(4)])
                #expect(fileBytes(segmentName(4), in: directory).starts(with: Array("SWJRNL02".utf8)))
                let reloaded = try withLoadedJournal(directory) { $1 }
                #expect(reloaded.records.map(\.action) == Array(sampleActions.prefix(3)) + [.append("next")])
                #expect(reloaded.warnings.isEmpty)

                // Now that the first-format segment is not the last, a bad byte in it is damage.
                var damaged = whole
                damaged[whole.count - 2] ^= 0x01
                try writeFile(damaged, segmentName(1), in: directory)
                try expectCorrupt(directory, segmentName(1), offset: nil)
            }
        }
    }
}
