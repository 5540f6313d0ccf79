import StillwaterTesting
import Testing
@testable import Stillwater

extension PersistenceTests {
    @Suite("Journal format")
    struct JournalFormatTests {
        @Test("CRC-32 gives the standard check values")
        func crcCheckValues() {
            #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
            #expect(CRC32.checksum([UInt8]()) == 0)
            #expect(CRC32.checksum(Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
            var split = CRC32()
            split.update(Array("12345".utf8))
            split.update(Array("6789".utf8)[...])
            #expect(split.value == 0xCBF4_3926)
        }

        @Test("file names hold the version in 20 digits, and only such names are read as segments or snapshots")
        func fileNames() {
            #expect(JournalFormat.segmentName(first: 42) == "journal-00000000000000000042.log")
            #expect(JournalFormat.snapshotName(version: Int.max) == "snapshot-09223372036854775807.json")
        #expect(JournalFormat.snapshotVersion(JournalFormat.snapshotName(version: Int.max)) == nil, "beyond maxVersion")
            #expect(JournalFormat.segmentVersion("journal-00000000000000000042.log") == 42)
            #expect(JournalFormat.snapshotVersion("snapshot-00000000000000000007.json") == 7)
            for name in [
                "journal-42.log", "journal-00000000000000000042.log.torn-1700000000", "journal-0000000000000000004x.log",
                "snapshot-00000000000000000007.json.tmp", "snapshot-99999999999999999999.json", "lock",
            ] {
                #expect(JournalFormat.segmentVersion(name) == nil && JournalFormat.snapshotVersion(name) == nil, "\(name)")
            }
        }

        @Test("records written one after another, in either format, scan back with their versions and payloads", arguments: [true, false])
        func recordsScanBack(_ commitMarks: Bool) throws {
            let payloads: [[UInt8]] = [Array("{}".utf8), [], Array(repeating: 0xFF, count: 1000)]
            var batch: [UInt8] = []
            for (index, payload) in payloads.enumerated() {
                JournalFormat.appendRecord(version: index + 10, payload: payload, to: &batch)
            }
            if commitMarks {
                let chain = JournalFormat.appendCommitMark(after: JournalFormat.chainSeed(first: 10), lastVersion: 12, to: &batch)
                #expect(chain != JournalFormat.chainSeed(first: 10))
            }
            let bytes = (commitMarks ? JournalFormat.segmentMagic : JournalFormat.firstFormatMagic) + batch
            let scan = try #require(JournalFormat.scanSegment(bytes, first: 10))
            #expect(scan.stop == nil)
            #expect(scan.hasCommitMarks == commitMarks)
            #expect(scan.end == bytes.count)
            let versions: [Int] = scan.frames.map { $0.version }
            #expect(versions == [10, 11, 12])
            let read: [[UInt8]] = scan.frames.map { Array(bytes[$0.payload]) }
            #expect(read == payloads)
            let offsets: [Int] = scan.frames.map { $0.offset }
            #expect(offsets == [8, 8 + 16 + 2, 8 + 16 + 2 + 16])
        }

        @Test("records after the last commit mark do not count, and a segment named for another version fails its first mark")
        func commitMarksDecide() throws {
            var batch: [UInt8] = []
            JournalFormat.appendRecord(version: 1, payload: Array("{}".utf8), to: &batch)
            _ = JournalFormat.appendCommitMark(after: JournalFormat.chainSeed(first: 1), lastVersion: 1, to: &batch)
            let committed = JournalFormat.segmentMagic + batch
            var unmarked = committed
            JournalFormat.appendRecord(version: 2, payload: Array("{}".utf8), to: &unmarked)
            let scan = try #require(JournalFormat.scanSegment(unmarked, first: 1))
            #expect(scan.frames.map { $0.version } == [1])
            #expect(scan.end == committed.count)
            #expect(scan.stop?.offset == committed.count)
            #expect(scan.stop?.proof == nil)
            let renamed = try #require(JournalFormat.scanSegment(committed, first: 2))
            #expect(renamed.frames.isEmpty)
            #expect(renamed.stop?.problem.contains("commit mark whose checksum does not match") == true)
        }

        @Test("a length beyond the cap stops the scan without reading further", arguments: [JournalFormat.maxPayload + 1, Int(UInt32.max)])
        func oversizedLength(_ length: Int) throws {
            let header = JournalFormat.littleEndianBytes(UInt32(length)) + [UInt8](repeating: 0, count: 12)
            let scan = try #require(JournalFormat.scanSegment(JournalFormat.segmentMagic + header, first: 1))
            #expect(scan.frames.isEmpty)
            #expect(scan.stop?.offset == 8)
            // The largest length is a commit mark's tag: a mark with no record before it.
            let problem = length == Int(UInt32.max) ? "a commit mark of version 0 after no record" : "more than the \(JournalFormat.maxPayload)"
            #expect(scan.stop?.problem.contains(problem) == true, "\(scan.stop?.problem ?? "")")
        }

        @Test("random bytes after the magic never trap, and every frame found lies inside the bytes", arguments: 0..<8)
        func randomSegments(_ seed: Int) throws {
            var random = SeededRandom(seed: UInt64(seed))
            for _ in 0..<250 {
                var bytes = seed % 4 == 3 ? JournalFormat.firstFormatMagic : JournalFormat.segmentMagic
                // Whole records now and then, so the scan gets past the first header too, and marks (some
                // valid, some with a commit tag and random bytes), so it gets past marks and checks proofs.
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    if Bool.random(using: &random) {
                        bytes += [0xFF, 0xFF, 0xFF, 0xFF] + (0..<12).map { _ in UInt8.random(in: .min ... .max, using: &random) }
                    }
                    JournalFormat.appendRecord(
                        version: Int.random(in: 0...9, using: &random),
                        payload: (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: .min ... .max, using: &random) },
                        to: &bytes)
                }
                bytes += (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: .min ... .max, using: &random) }
                let scan = try #require(JournalFormat.scanSegment(bytes, first: 1))
                #expect(scan.end <= bytes.count)
                #expect(scan.frames.allSatisfy { $0.payload.upperBound <= bytes.count && $0.offset + 16 == $0.payload.lowerBound })
                #expect(scan.stop.map { $0.offset < bytes.count } ?? true)
                _ = JournalFormat.snapshotJSON(in: Array(bytes.dropFirst(8)), version: 1)
            }
        }

        @Test("a snapshot file checks back, and a change anywhere in it is found")
        func snapshotFile() throws {
            let json = Array(#"{"state":{"count":3},"version":9}"#.utf8)
            let file = JournalFormat.snapshotFile(version: 9, json: json)
            #expect(file.count == JournalFormat.snapshotHeaderSize + json.count)
            #expect(String(decoding: file.prefix(9), as: UTF8.self) == "SWSNAP01 ")
            let range = try JournalFormat.snapshotJSON(in: file, version: 9).get()
            #expect(Array(file[range]) == json)
            #expect((try? JournalFormat.snapshotJSON(in: file, version: 8).get()) == nil)
            for index in file.indices {
                var changed = file
                changed[index] ^= 0x04
                #expect((try? JournalFormat.snapshotJSON(in: changed, version: 9).get()) == nil, "byte \(index)")
            }
            #expect((try? JournalFormat.snapshotJSON(in: Array(file.dropLast()), version: 9).get()) == nil)
        }
    }
}
