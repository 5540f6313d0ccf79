import Foundation
import Testing
@testable import Stillwater

@Suite("Store history")
struct HistoryTests {
    /// A session with actions, an undo and a redo.
    func recordSession() -> (History<TallyAction>, Store<Tally>) {
        let history = History<TallyAction>(undoLimit: 10)
        let store = Store(Tally(), middleware: [history.middleware])
        store.dispatch(TallyAction.add(3))
        store.dispatch(TallyAction.rename("first"))
        store.dispatch(history.undo)
        store.dispatch(TallyAction.append("milk"))
        store.dispatch(TallyAction.increment)
        store.dispatch(history.undo)
        store.dispatch(history.redo)
        return (history, store)
    }

    @Test("every dispatched action is recorded with its time, undo and redo included")
    func recordsEntries() {
        let before = Date()
        let (history, _) = recordSession()
        let steps = history.entries.map(\.step)
        #expect(steps == [
            .action(.add(3)), .action(.rename("first")), .undo, .action(.append("milk")),
            .action(.increment), .undo, .redo,
        ])
        #expect(history.entries.allSatisfy { $0.time >= before && $0.time <= Date() })
        #expect(zip(history.entries, history.entries.dropFirst()).allSatisfy { $0.time <= $1.time })
    }

    @Test("removeUndoStates forgets undo and redo, keeps the entries, and undo then changes nothing")
    func removeUndoStates() {
        let (history, store) = recordSession()
        store.dispatch(history.undo)
        #expect(history.canUndo && history.canRedo)
        let entries = history.entries.count
        history.removeUndoStates()
        #expect(!history.canUndo && !history.canRedo)
        #expect(history.entries.count == entries)
        let before = store.state.value
        store.dispatch(history.undo)
        store.dispatch(history.redo)
        #expect(store.state.value == before)
        store.dispatch(TallyAction.increment)
        store.dispatch(history.undo)
        #expect(store.state.value == before, "undo still works for changes after the reset")
    }

    @Test("replaying a recorded session into a fresh store gives an equal final state")
    func replay() {
        let (history, store) = recordSession()
        let fresh = History<TallyAction>(undoLimit: 10)
        let replayed = Store(Tally(), middleware: [fresh.middleware])
        fresh.replay(history.entries, into: replayed)
        #expect(replayed.state.value == store.state.value)
        #expect(replayed.state.value == Tally(count: 4, name: "x", items: ["milk"]))
    }

    @Test("a session exported as JSON and imported again replays to the same state")
    func jsonRoundTrip() throws {
        let (history, store) = recordSession()
        let data = try history.exportJSON()
        let entries = try History<TallyAction>.entries(fromJSON: data)
        #expect(entries.map(\.step) == history.entries.map(\.step))
        // Times are written to the millisecond.
        #expect(zip(entries, history.entries).allSatisfy { abs($0.time.timeIntervalSince($1.time)) < 0.001 })
        let fresh = History<TallyAction>()
        let replayed = Store(Tally(), middleware: [fresh.middleware])
        fresh.replay(entries, into: replayed)
        #expect(replayed.state.value == store.state.value)
    }

    @Test("exported times are ISO 8601 strings in UTC with milliseconds")
    func isoTimes() throws {
        // 2024-02-29 12:30:45.250 UTC, plus a part finer than a millisecond that is dropped.
        let time = Date(timeIntervalSince1970: 1_709_209_845.250_4)
        let data = try History<TallyAction>.json([.init(.action(.add(2)), time: time), .init(.undo, time: time)])
        let text = String(decoding: data, as: UTF8.self)
        #expect(text == #"[{"step":{"action":{"add":{"_0":2}},"kind":"action"},"time":"2024-02-29T12:30:45.250Z"},"#
            + #"{"step":{"kind":"undo"},"time":"2024-02-29T12:30:45.250Z"}]"#)
    }

    @Test("ISO 8601 times are read with or without fractional seconds and with any UTC offset")
    func readsIsoTimes() throws {
        let json = #"""
            [{"step": {"kind": "undo"}, "time": "2024-02-29T12:30:45.250Z"},
             {"step": {"kind": "redo"}, "time": "2024-02-29T14:30:45+02:00"}]
            """#
        let entries = try History<TallyAction>.entries(fromJSON: Data(json.utf8))
        #expect(entries == [
            .init(.undo, time: Date(timeIntervalSince1970: 1_709_209_845.25)),
            .init(.redo, time: Date(timeIntervalSince1970: 1_709_209_845)),
        ])
    }

    @Test("times written by earlier versions, as seconds since 2001, still read as the same instant")
    func readsOldTimes() throws {
        let json = #"[{"step": {"kind": "undo"}, "time": 730902645.25}, {"step": {"kind": "redo"}, "time": 0}]"#
        let entries = try History<TallyAction>.entries(fromJSON: Data(json.utf8))
        #expect(entries.map(\.time) == [
            Date(timeIntervalSince1970: 1_709_209_845.25), Date(timeIntervalSinceReferenceDate: 0),
        ])
    }

    @Test("a time that is neither ISO 8601 nor a number throws a DecodingError")
    func badTime() {
        for time in [#""29 February 2024""#, #""2024-02-29 12:30:45Z""#, "true"] {
            #expect(throws: DecodingError.self, "time \(time)") {
                _ = try History<TallyAction>.entries(fromJSON: Data(#"[{"step": {"kind": "undo"}, "time": \#(time)}]"#.utf8))
            }
        }
    }

    @Test("importing JSON that is not a history throws")
    func badJSON() {
        #expect(throws: DecodingError.self) {
            _ = try History<TallyAction>.entries(fromJSON: Data(#"[{"step": {"kind": "jump"}, "time": 0}]"#.utf8))
        }
        #expect(throws: (any Error).self) {
            _ = try History<TallyAction>.entries(fromJSON: Data("not json".utf8))
        }
    }

    @Test("undo then redo restores the state; a new action clears redo")
    func undoRedo() {
        let history = History<TallyAction>()
        let store = Store(Tally(), middleware: [history.middleware])
        store.dispatch(TallyAction.add(1))
        store.dispatch(TallyAction.add(10))
        let final = store.state.value
        store.dispatch(history.undo)
        #expect(store.state.value.count == 1)
        store.dispatch(history.undo)
        #expect(store.state.value.count == 0)
        #expect(!history.canUndo && history.canRedo)
        store.dispatch(history.undo)
        #expect(store.state.value.count == 0)
        store.dispatch(history.redo)
        store.dispatch(history.redo)
        #expect(store.state.value == final)
        store.dispatch(history.undo)
        store.dispatch(TallyAction.rename("new"))
        #expect(!history.canRedo)
        store.dispatch(history.redo)
        #expect(store.state.value.count == 1 && store.state.value.name == "new")
    }

    @Test("undo goes back at most undoLimit steps")
    func boundedUndo() {
        let history = History<TallyAction>(undoLimit: 3)
        let store = Store(Tally(), middleware: [history.middleware])
        for _ in 0..<10 { store.dispatch(TallyAction.increment) }
        for _ in 0..<10 { store.dispatch(history.undo) }
        #expect(store.state.value.count == 7)
        #expect(history.entries.count == 20)
    }

    @Test("once more actions than undoLimit were recorded, undo and redo step through the latest states in order")
    func undoAfterDroppingOldest() {
        let history = History<TallyAction>(undoLimit: 3)
        let store = Store(Tally(), middleware: [history.middleware])
        var seen: [Int] = []
        for _ in 0..<5 { store.dispatch(TallyAction.increment) }   // keeps the states 2, 3 and 4
        for undoes in [true, true, false] {
            if undoes { store.dispatch(history.undo) } else { store.dispatch(history.redo) }
            seen.append(store.state.value.count)
        }
        store.dispatch(TallyAction.add(10))                          // keeps 2, 3 and 4
        store.dispatch(TallyAction.add(10))                          // keeps 3, 4 and 14; drops 2
        for _ in 0..<4 {
            store.dispatch(history.undo)
            seen.append(store.state.value.count)
        }
        #expect(seen == [4, 3, 4, 14, 4, 3, 3])
        for _ in 0..<4 {
            store.dispatch(history.redo)
            seen.append(store.state.value.count)
        }
        #expect(seen.suffix(4) == [4, 14, 24, 24])
    }

    @Test("an undo limit of 1 keeps only the state before the last action; 0 keeps none")
    func smallLimits() {
        let one = History<TallyAction>(undoLimit: 1)
        let store = Store(Tally(), middleware: [one.middleware])
        store.dispatch(TallyAction.add(1))
        store.dispatch(TallyAction.add(2))
        store.dispatch(one.undo)
        store.dispatch(one.undo)
        #expect(store.state.value.count == 1)
        let none = History<TallyAction>(undoLimit: 0)
        let other = Store(Tally(), middleware: [none.middleware])
        other.dispatch(TallyAction.add(1))
        other.dispatch(none.undo)
        #expect(!none.canUndo && other.state.value.count == 1 && none.entries.count == 2)
    }

    @Test("observers see an undo like any other new state")
    func undoIsObserved() {
        let history = History<TallyAction>()
        let store = Store(Tally(), middleware: [history.middleware])
        let counts = Shared<[Int]>([])
        let subscription = store.scope(\.count).observe { counts.value.append($0) }
        store.dispatch(TallyAction.increment)
        store.dispatch(history.undo)
        #expect(counts.value == [0, 1, 0])
        subscription.cancel()
    }

    @Test("a negative undo limit stops the process with a message naming the argument")
    func negativeLimit() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = History<TallyAction>(undoLimit: -1)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("undoLimit"), "message: \(message)")
        #endif
    }
}
