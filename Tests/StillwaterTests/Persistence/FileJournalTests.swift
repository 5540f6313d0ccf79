import Foundation
import StillwaterTesting
import Testing
@testable import Stillwater

extension PersistenceTests {
    @Suite("FileJournal")
    struct FileJournalTests {
        @Test("appended and synced records load back in order, with their versions, when the journal is reopened")
        func roundTrip() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, contents in
                    #expect(contents == JournalContents())
                    try append(sampleActions, to: journal, after: contents.version)
                }
                try withLoadedJournal(directory) { journal, contents in
                    #expect(contents.snapshot == nil)
                    #expect(contents.warnings.isEmpty)
                    #expect(contents.records.map(\.action) == sampleActions)
                    #expect(contents.records.map(\.version) == Array(1...sampleActions.count))
                    #expect(contents.version == sampleActions.count)
                    #expect(contents.replayed(onto: Tally()) == liveState(sampleActions))
                    try append([.append("later")], to: journal, after: contents.version)
                }
                let reloaded = try withLoadedJournal(directory) { $1 }
                #expect(reloaded.records.map(\.action) == sampleActions + [.append("later")])
                #expect(fileNames(in: directory) == ["journal-00000000000000000001.log", "lock"])
            }
        }

        @Test("a segment holds the magic, then per record length, CRC-32, version and the action's JSON with sorted keys, and per sync a commit mark chained from the segment's seed")
        func recordBytes() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    try append([.rename("z")], to: journal, after: 0)
                }
                let bytes = fileBytes(segmentName(1), in: directory)
                let json = Array(#"{"rename":{"_0":"z"}}"#.utf8)
                let versionBytes: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0]
                let crc = CRC32.checksum(versionBytes + json)
                let length = UInt32(json.count)
                let header = (0..<4).map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
                    + (0..<4).map { UInt8(truncatingIfNeeded: crc >> ($0 * 8)) }
                let record = header + versionBytes + json
                let magic = Array("SWJRNL02".utf8)
                let seed = CRC32.checksum(magic + [1, 0, 0, 0, 0, 0, 0, 0])
                let chain = CRC32.checksum((0..<4).map { UInt8(truncatingIfNeeded: seed >> ($0 * 8)) } + record + versionBytes)
                let mark: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF] + (0..<4).map { UInt8(truncatingIfNeeded: chain >> ($0 * 8)) } + versionBytes
                #expect(bytes == magic + record + mark)
            }
        }

        @Test("records appended but not synced are not durable: a reload drops them and appends go on from the durable version")
        func unsyncedRecordsDropped() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    try append([.increment], to: journal, after: 0)
                    try journal.append(.add(5), version: 2)
                    let reloaded = try journal.load()
                    #expect(reloaded.records.map(\.action) == [.increment])
                    try journal.append(.add(7), version: 2)
                    try journal.sync()
                }
                #expect(try withLoadedJournal(directory) { $1 }.records.map(\.action) == [.increment, .add(7)])
            }
        }

        @Test("a store restored from a snapshot and its tail equals one that reduced the same actions live")
        func restoreFromSnapshotAndTail() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    let store = Store(Tally())
                    for (index, action) in sampleActions.enumerated() {
                        store.dispatch(action)
                        try journal.append(action, version: index + 1)
                        if index == 4 { try journal.writeSnapshot(store.state.value, version: index + 1) }
                    }
                    try journal.sync()
                }
                let (store, contents) = try Store.restoring(from: try TallyJournal(directory: directory), initialState: Tally())
                #expect(store.state.value == liveState(sampleActions))
                #expect(contents.snapshot?.version == 5)
                #expect(contents.snapshot?.state == liveState(Array(sampleActions.prefix(5))))
                #expect(contents.records.map(\.version) == Array(6...sampleActions.count))
                #expect(contents.version == sampleActions.count)
            }
        }

        @Test("restoring replays effect actions without running their effects; the actions they sent were journaled themselves")
        func effectsNotRunOnReplay() throws {
            try withJournalDirectory { directory in
                let live: Tally
                do {
                    let journal = try FileJournal<Tally, EchoAction>(directory: directory)
                    let contents = try journal.load()
                    let counter = RunCounter()
                    let store = Store(
                        Tally(), dependencies: Dependencies { $0.runCounter = counter },
                        middleware: [.journaling(to: journal, startingAfter: contents.version, onError: { Issue.record($0) })])
                    store.dispatch(EchoAction.shout("a"))
                    store.dispatch(EchoAction.shout("b"))
                    #expect(counter.value == 2)
                    live = store.state.value
                }
                let counter = RunCounter()
                let (store, contents) = try Store.restoring(
                    from: try FileJournal<Tally, EchoAction>(directory: directory), initialState: Tally(),
                    dependencies: Dependencies { $0.runCounter = counter })
                #expect(contents.records.map(\.action) == [.shout("a"), .echoed("a"), .shout("b"), .echoed("b")])
                #expect(store.state.value == live)
                #expect(store.state.value.items == ["a", "echo a", "b", "echo b"])
                #expect(counter.value == 0, "no effect ran while restoring")
                store.dispatch(EchoAction.shout("c"))
                #expect(counter.value == 1, "the restored store runs the effects of new actions")
            }
        }

        @Test("writeSnapshot keeps the newest two snapshots and the segments after the older one, and deletes the rest")
        func snapshotRetention() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    var version = 0
                    var state = Tally()
                    for round in 1...3 {
                        let actions: [TallyAction] = [.add(round), .append("r\(round)")]
                        try append(actions, to: journal, after: version)
                        for action in actions { action.reduce(&state) }
                        version += actions.count
                        try journal.writeSnapshot(state, version: version)
                    }
                    try append([.increment], to: journal, after: version)
                }
                // Snapshots at 2, 4 and 6: the one at 2 is gone, and so are the segments of versions 1-2
                // and 3-4, which the older kept snapshot (4) covers. The segment of 5-6 stays, for a load
                // that finds the snapshot at 6 damaged and falls back to the one at 4.
                #expect(fileNames(in: directory) == [
                    segmentName(5), segmentName(7), "lock", snapshotName(4), snapshotName(6),
                ])
                let contents = try withLoadedJournal(directory) { $1 }
                #expect(contents.snapshot?.version == 6)
                #expect(contents.records.map(\.version) == [7])
                #expect(contents.replayed(onto: Tally()) == liveState([.add(1), .append("r1"), .add(2), .append("r2"), .add(3), .append("r3"), .increment]))
            }
        }

        @Test("a snapshot of an earlier version than the last appended keeps the records after it")
        func snapshotBehindTheLastRecord() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    try append([.add(1), .add(2), .add(3)], to: journal, after: 0)
                    try journal.writeSnapshot(liveState([.add(1)]), version: 1)
                    try append([.add(4)], to: journal, after: 3)
                }
                let contents = try withLoadedJournal(directory) { $1 }
                #expect(contents.snapshot?.version == 1)
                #expect(contents.records.map(\.version) == [2, 3, 4])
                #expect(contents.replayed(onto: Tally()).count == 10)
            }
        }

        @Test("a snapshot at the journal's version with no appends since loads with no records, and appends go on after it")
        func snapshotWithoutTail() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    try append([.add(2)], to: journal, after: 0)
                    try journal.writeSnapshot(liveState([.add(2)]), version: 1)
                    try journal.writeSnapshot(liveState([.add(2)]), version: 1)
                }
                try withLoadedJournal(directory) { journal, contents in
                    #expect(contents.snapshot == JournalSnapshot(version: 1, state: liveState([.add(2)])))
                    #expect(contents.records.isEmpty)
                    try append([.add(3)], to: journal, after: contents.version)
                }
                #expect(try withLoadedJournal(directory) { $1 }.replayed(onto: Tally()).count == 5)
            }
        }

        @Test("a record that is intact but of another shape is a decoding error naming the file and the version")
        func decodingFailure() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    try append([.increment, .add(2)], to: journal, after: 0)
                }
                let error = try #require(throws: JournalError.self) {
                    _ = try FileJournal<Tally, EchoAction>(directory: directory).load()
                }
                #expect(error.kind == .decoding)
                #expect(error.path.hasSuffix(segmentName(1)))
                #expect(error.description.contains("version 1"))
                #expect(!error.description.contains("\n"))
            }
        }

        @Test("an action that encodes to more than 16 MiB is refused with an encoding error, and nothing is appended")
        func oversizedAction() throws {
            try withJournalDirectory { directory in
                try withLoadedJournal(directory) { journal, _ in
                    let huge = String(repeating: "x", count: JournalFormat.maxPayload)
                    let error = try #require(throws: JournalError.self) { try journal.append(.append(huge), version: 1) }
                    #expect(error.kind == .encoding)
                    try append([.increment], to: journal, after: 0)
                }
                #expect(try withLoadedJournal(directory) { $1 }.records.map(\.action) == [.increment])
            }
        }
    }
}

extension PersistenceTests {
    @Suite("FileJournal lock")
    struct FileJournalLockTests {
        @Test("a second journal on the same directory, while the first is open, throws locked; after it is freed, opens")
        func secondJournalLocked() throws {
            try withJournalDirectory { directory in
                do {
                    let first = try TallyJournal(directory: directory)
                    let error = try #require(throws: JournalError.self) { _ = try TallyJournal(directory: directory) }
                    #expect(error.kind == .locked)
                    #expect(error.path == directory + "/lock")
                    #expect(error.description.contains("another journal has this directory open"))
                    withExtendedLifetime(first) {}
                }
                _ = try TallyJournal(directory: directory).load()
            }
        }

        @Test("another process cannot take the directory's lock while a journal holds it", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
        func otherProcessLocked() throws {
            try withJournalDirectory { directory in
                /// The exit status of `flock -n DIR/lock true`: 0 when the lock was free.
                func tryLockFromAnotherProcess() throws -> Int32 {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
                    process.arguments = ["-n", directory + "/lock", "true"]
                    try process.run()
                    process.waitUntilExit()
                    return process.terminationStatus
                }
                do {
                    let journal = try TallyJournal(directory: directory)
                    #expect(try tryLockFromAnotherProcess() == 1)
                    withExtendedLifetime(journal) {}
                }
                #expect(try tryLockFromAnotherProcess() == 0)
            }
        }
    }
}
