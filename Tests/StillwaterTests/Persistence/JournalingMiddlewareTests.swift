import Testing
@testable import Stillwater

extension PersistenceTests {
    @Suite("Journaling middleware")
    struct JournalingMiddlewareTests {
        @Test("every action of the journal's type is appended and synced before it is reduced; other types pass through unjournaled")
        func writeAhead() throws {
            let journal = MemoryJournal<Tally, TallyAction>()
            let contents = try journal.load()
            let reducedBefore = Shared<[Int]>([])
            let store = Store(Tally(), middleware: [
                .journaling(to: journal, startingAfter: contents.version, onError: { Issue.record($0) }),
                Middleware { _, action, next in
                    // Runs after the journaling middleware, right before the reduce.
                    if action is TallyAction { reducedBefore.value.append(journal.syncCount) }
                    next(action)
                },
            ])
            store.dispatch(TallyAction.add(2))
            store.dispatch(Increment(by: 10))
            store.dispatch(TallyAction.append("milk"))
            #expect(reducedBefore.value == [1, 2], "each action was synced before it reached the reducer")
            #expect(store.state.value.count == 12)
            let journaled = try journal.load()
            #expect(journaled.records == [JournalRecord(version: 1, action: .add(2)), JournalRecord(version: 2, action: .append("milk"))])
        }

        @Test("when the journal fails, the action is not reduced, onError is told, and the next action takes its version")
        func failureBlocksTheAction() throws {
            let journal = MemoryJournal<Tally, TallyAction>()
            _ = try journal.load()
            let errors = Shared<[String]>([])
            let store = Store(Tally(), middleware: [
                .journaling(to: journal, startingAfter: 0, onError: { errors.value.append("\($0)") }),
            ])
            store.dispatch(TallyAction.add(1))
            journal.failNextSync(with: TestError(code: 28))
            store.dispatch(TallyAction.add(100))
            store.dispatch(TallyAction.add(2))
            #expect(errors.value == ["TestError(28)"])
            #expect(store.state.value.count == 3)
            #expect(try journal.load().records.map(\.version) == [1, 2])
            #expect(try journal.load().replayed(onto: Tally()) == store.state.value)
        }

        @Test("with snapshotEvery, the state after every n-th version is a snapshot, and a store restored from the journal equals the live one")
        func snapshots() throws {
            try withJournalDirectory { directory in
                let live: Tally
                do {
                    let journal = try TallyJournal(directory: directory)
                    let contents = try journal.load()
                    let store = Store(Tally(), middleware: [
                        .journaling(to: journal, startingAfter: contents.version, snapshotEvery: 3, onError: { Issue.record($0) }),
                    ])
                    for action in sampleActions { store.dispatch(action) }
                    live = store.state.value
                }
                let (restored, contents) = try Store.restoring(from: try TallyJournal(directory: directory), initialState: Tally())
                #expect(contents.snapshot?.version == 6)
                #expect(contents.records.map(\.version) == [7, 8])
                #expect(restored.state.value == live)
            }
        }
    }
}
