import Testing
@testable import Stillwater

extension PersistenceTests {
    @Suite("MemoryJournal")
    struct MemoryJournalTests {
        @Test("synced records load back; unsynced ones are dropped by a load, like a restart drops them")
        func syncAndLoad() throws {
            let journal = MemoryJournal<Tally, TallyAction>()
            #expect(try journal.load() == JournalContents())
            try journal.append(.increment, version: 1)
            try journal.append(.add(2), version: 2)
            try journal.sync()
            try journal.append(.add(3), version: 3)
            let contents = try journal.load()
            #expect(contents.records == [JournalRecord(version: 1, action: .increment), JournalRecord(version: 2, action: .add(2))])
            #expect(contents.version == 2)
            #expect(journal.syncCount == 1)
        }

        @Test("a snapshot lets go of the records it covers, and the store restores to the same state")
        func snapshot() throws {
            let journal = MemoryJournal<Tally, TallyAction>()
            _ = try journal.load()
            for (index, action) in sampleActions.enumerated() { try journal.append(action, version: index + 1) }
            try journal.writeSnapshot(liveState(Array(sampleActions.prefix(6))), version: 6)
            // An older snapshot than the one kept is not used, as a file journal loads its newest.
            try journal.writeSnapshot(Tally(), version: 2)
            let (store, contents) = try Store.restoring(from: journal, initialState: Tally())
            #expect(contents.snapshot?.version == 6)
            #expect(contents.records.map(\.version) == [7, 8])
            #expect(store.state.value == liveState(sampleActions))
            #expect(journal.syncCount == 0, "a snapshot's own sync is not counted")
        }

        @Test("a failed sync throws once, drops what it was to write, and the journal goes on from the durable version")
        func failedSync() throws {
            let journal = MemoryJournal<Tally, TallyAction>()
            _ = try journal.load()
            try journal.append(.increment, version: 1)
            try journal.sync()
            try journal.append(.add(5), version: 2)
            journal.failNextSync(with: TestError(code: 28))
            #expect(throws: TestError(code: 28)) { try journal.sync() }
            try journal.append(.add(7), version: 2)
            try journal.sync()
            #expect(try journal.load().records.map(\.action) == [.increment, .add(7)])
            #expect(journal.syncCount == 3)
        }
    }
}
