import Foundation
import Stillwater
import StillwaterTesting
import Synchronization
import Testing
@testable import TodoCore

/// A fake ``TodoStorage``: records every list it is asked to write, and answers with `answer`.
final class StorageLog: Sendable {
    private let state: Mutex<[TodoList]> = Mutex([])
    private let answer: @Sendable (TodoList) -> Result<TodoFile.SaveResult, TodoFileError>

    init(answer: @escaping @Sendable (TodoList) -> Result<TodoFile.SaveResult, TodoFileError> = { _ in .success(.saved) }) {
        self.answer = answer
    }

    /// The lists written so far, in order.
    var writes: [TodoList] { state.withLock { $0 } }

    var storage: TodoStorage {
        TodoStorage { [self] _, list, _ in
            state.withLock { $0.append(list) }
            return answer(list)
        }
    }
}

@Suite("TodoSaveAction: the debounced save, exhaustively with TestStore")
struct TodoSaveTests {
    let file = TodoFile(path: "/nonexistent-folder/list.json")
    let start = TodoList(titles: ["milk"])

    func list(_ titles: String...) -> TodoList { TodoList(titles: titles) }

    func makeStore(_ log: StorageLog, delay: Duration = .milliseconds(400)) -> TestStore<TodoSaveState, TodoSaveAction> {
        TestStore(initialState: TodoSaveState(file: file, onDisk: start, delay: delay)) { $0.todoStorage = log.storage }
    }

    @Test("a burst of changes within the delay is one save, of the last list, once the delay has passed")
    func burst() async {
        let log = StorageLog()
        let store = makeStore(log)
        let (one, two, three) = (list("milk", "eggs"), list("milk", "eggs", "tea"), list("eggs", "tea"))
        await store.send(.changed(one)) {
            $0.pending = one
            $0.status = .waiting
        }
        store.scheduler.advance(by: .milliseconds(300))
        await store.send(.changed(two)) { $0.pending = two }
        store.scheduler.advance(by: .milliseconds(399))
        await store.send(.changed(three)) { $0.pending = three }
        store.scheduler.advance(by: .milliseconds(399))
        #expect(log.writes.isEmpty, "nothing is written while changes keep coming within the delay")
        store.scheduler.advance(by: .milliseconds(1))
        await store.receive(.finished(three, .success(.saved))) {
            $0.pending = nil
            $0.status = .saved
            $0.onDisk = three
        }
        #expect(log.writes == [three])
        #expect(store.scheduler.pendingWorkCount == 0)
        await store.finish()
    }

    @Test("a failing storage sets the status to the error, and the change stays pending")
    func failure() async {
        let error = TodoFileError.readOnly(path: file.path)
        let log = StorageLog { _ in .failure(error) }
        let store = makeStore(log)
        let changed = list("milk", "eggs")
        await store.send(.changed(changed)) {
            $0.pending = changed
            $0.status = .waiting
        }
        store.scheduler.advance(by: .milliseconds(400))
        await store.receive(.finished(changed, .failure(error))) {
            $0.status = .failed("not saved: \(error)")
        }
        #expect(store.state.problem == "not saved: \(error)")
        #expect(store.state.hasUnsavedChanges)

        // The failure stays shown while the next change waits.
        let next = list("milk", "eggs", "tea")
        await store.send(.changed(next)) { $0.pending = next }
        #expect(store.state.problem == "not saved: \(error)")
        store.scheduler.advance(by: .milliseconds(400))
        await store.receive(.finished(next, .failure(error)))
        #expect(log.writes == [changed, next])
        await store.finish()
    }

    @Test("a merge sets the notice and delivers the merged list; the next plain save clears the notice")
    func merge() async {
        let ours = list("milk", "eggs")
        var theirs = start
        TodoAction.add("bread").reduce(&theirs)
        let merge = TodoMerge(base: start, ours: ours, theirs: theirs)
        let answers = Mutex(0)
        let log = StorageLog { _ in
            answers.withLock { $0 += 1; return $0 } == 1 ? .success(.merged(merge)) : .success(.saved)
        }
        let store = makeStore(log)
        await store.send(.changed(ours)) {
            $0.pending = ours
            $0.status = .waiting
        }
        store.scheduler.advance(by: .milliseconds(400))
        await store.receive(.finished(ours, .success(.merged(merge)))) {
            $0.pending = nil
            $0.status = .saved
            $0.mergeNotice = "Merged: another window's changes to list.json"
            $0.merged = merge.list
            $0.renumbered = [2: 3]      // theirs gave "bread" the identity 2 too: "eggs" is 3 now
        }
        #expect(merge.list.items.count == 3)

        // The session adopts the merged list: that change is what the merge wrote, so it needs no save.
        await store.send(.changed(merge.list)) {
            $0.merged = nil
            $0.renumbered = [:]
            $0.onDisk = merge.list
        }
        #expect(!store.state.hasUnsavedChanges)
        #expect(log.writes == [ours])

        // The notice stays until a later change is saved without a merge.
        var next = merge.list
        TodoAction.toggle(id: 1).reduce(&next)
        await store.send(.changed(next)) {
            $0.pending = next
            $0.status = .waiting
        }
        store.scheduler.advance(by: .milliseconds(400))
        await store.receive(.finished(next, .success(.saved))) {
            $0.pending = nil
            $0.status = .saved
            $0.onDisk = next
            $0.mergeNotice = nil
        }
        await store.finish()
    }

    @Test("flush saves at once and cancels the waiting save")
    func flush() async {
        let log = StorageLog()
        let store = makeStore(log)
        let changed = list("milk", "eggs")
        await store.send(.changed(changed)) {
            $0.pending = changed
            $0.status = .waiting
        }
        store.scheduler.advance(by: .milliseconds(100))
        await store.send(.flush)
        await store.receive(.finished(changed, .success(.saved))) {
            $0.pending = nil
            $0.status = .saved
            $0.onDisk = changed
        }
        #expect(log.writes == [changed])
        #expect(store.scheduler.pendingWorkCount == 0, "the wait was cancelled")
        store.scheduler.advance(by: .seconds(1))
        #expect(log.writes == [changed], "the cancelled wait writes nothing")

        await store.send(.flush)      // nothing pending: nothing to do
        #expect(log.writes == [changed])
        await store.finish()
    }

    @Test("a save that ends while a newer change waits leaves that change pending and the status waiting")
    func finishedBehindNewerChange() async {
        let (older, newer) = (list("milk", "eggs"), list("milk", "eggs", "tea"))
        var state = TodoSaveState(file: file, onDisk: start, delay: .milliseconds(400))
        state.pending = newer
        state.status = .waiting
        _ = TodoSaveAction.finished(older, .success(.saved)).reduce(into: &state)
        #expect(state.pending == newer)
        #expect(state.status == .waiting)
        #expect(state.onDisk == older)
        #expect(state.hasUnsavedChanges)
    }

    @Test("without a file nothing is pending and nothing is written")
    func noFile() async {
        let log = StorageLog()
        let store = TestStore<TodoSaveState, TodoSaveAction>(initialState: TodoSaveState(file: nil, onDisk: nil)) {
            $0.todoStorage = log.storage
        }
        await store.send(.changed(list("milk")))
        await store.send(.flush)
        #expect(!store.state.hasUnsavedChanges)
        #expect(log.writes.isEmpty)
        await store.finish()
    }

    @Test("saving elsewhere makes the new file the file and cancels the waiting save")
    func savedElsewhere() async {
        let log = StorageLog()
        let store = makeStore(log)
        let changed = list("milk", "eggs")
        let other = TodoFile(path: "/nonexistent-folder/other.json")
        await store.send(.changed(changed)) {
            $0.pending = changed
            $0.status = .waiting
        }
        await store.send(.savedElsewhere(other, changed)) {
            $0.file = other
            $0.onDisk = changed
            $0.pending = nil
            $0.status = .saved
        }
        store.scheduler.advance(by: .seconds(1))
        #expect(log.writes.isEmpty)
        await store.finish()
    }
}

@Suite("TodoSession with a save delay, on a virtual clock")
struct SaveDelayTests {
    let folder = TemporaryFolder()

    /// A session on a new file in `folder`, saving 400 ms after the last change on `scheduler`, through
    /// the real file with every write logged.
    func makeSession(_ scheduler: TestScheduler, log: StorageLog = StorageLog()) -> (TodoSession, TodoFile, StorageLog) {
        let file = TodoFile(path: folder.file("list.json"))
        let session = TodoSession(
            TodoList(), file: file, saveDelay: .milliseconds(400), scheduler: scheduler,
            storage: TodoStorage { file, list, known in
                _ = log.storage.update(file, list, known)
                return TodoStorage.live.update(file, list, known)
            })
        return (session, file, log)
    }

    @Test("no write before the delay, one write after it, of the last list")
    func delay() throws {
        let scheduler = TestScheduler()
        let (session, file, log) = makeSession(scheduler)
        _ = try session.perform(.add("milk"))
        scheduler.advance(by: .milliseconds(200))
        _ = try session.perform(.add("eggs"))
        scheduler.advance(by: .milliseconds(399))
        #expect(log.writes.isEmpty)
        #expect(try file.load() == .missing)
        #expect(session.hasUnsavedChanges, "a waiting save is an unsaved change")
        scheduler.advance(by: .milliseconds(1))
        #expect(log.writes.count == 1)
        #expect(try file.load().list.items.map(\.title) == ["milk", "eggs"])
        #expect(!session.hasUnsavedChanges)
        scheduler.advance(by: .seconds(10))
        #expect(log.writes.count == 1)
    }

    @Test("saveNow writes a waiting change at once")
    func saveNow() throws {
        let scheduler = TestScheduler()
        let (session, file, log) = makeSession(scheduler)
        _ = try session.perform(.add("milk"))
        session.saveNow()
        #expect(log.writes.count == 1)
        #expect(try file.load().list.items.map(\.title) == ["milk"])
        #expect(scheduler.pendingWorkCount == 0)
        session.saveNow()
        #expect(log.writes.count == 1, "nothing waits: nothing is written")
    }

    @Test("the undo history records the changes, not the saves")
    func undoSkipsSaves() throws {
        let scheduler = TestScheduler()
        let (session, file, _) = makeSession(scheduler)
        _ = try session.perform(.add("milk"))
        scheduler.advance(by: .milliseconds(400))
        _ = try session.perform(.add("eggs"))
        scheduler.advance(by: .milliseconds(400))
        #expect(session.history.entries.count == 2, "two changes recorded, no save")
        #expect(session.undo())
        #expect(session.undo())
        #expect(!session.undo(), "two changes, two undos: the saves were not recorded")
        scheduler.advance(by: .milliseconds(400))
        #expect(try file.load().list.items.isEmpty)
    }

    @Test("q saves a waiting change and quits at once")
    func quitSaves() throws {
        let scheduler = TestScheduler()
        let (session, file, _) = makeSession(scheduler)
        let screen = TodoScreen(session: session, width: 80, height: 12, output: { _ in })
        _ = try session.perform(.add("milk"))
        #expect(!screen.handle(.character("q")))
        #expect(try file.load().list.items.map(\.title) == ["milk"])
    }

    @Test("a save that fails between keys shows on the status line without a key")
    func failureShowsBetweenKeys() throws {
        let scheduler = TestScheduler()
        let file = TodoFile(path: folder.file("list.json"))
        let session = TodoSession(
            TodoList(), file: file, showsCursor: true, saveDelay: .milliseconds(400), scheduler: scheduler,
            storage: TodoStorage { file, _, _ in .failure(.readOnly(path: file.path)) })
        let terminal = VirtualTerminal(height: 12)
        let screen = TodoScreen(session: session, width: 200, height: 12, output: terminal.receive)
        _ = try session.perform(.add("milk"))
        #expect(!terminal.rows[10].contains("not saved"))
        scheduler.advance(by: .milliseconds(400))
        #expect(terminal.rows[10].hasPrefix("w saves elsewhere · not saved: \(file.path) is read-only"))
        #expect(screen.handle(.character("q")), "the failed save is asked about before quitting")
    }

    /// A session saving 400 ms after a change on `scheduler`, whose file ("milk") another session then
    /// changed ("bread" added), after which this one added "tea" (its save waits).
    func sessionBeforeMerge(_ scheduler: TestScheduler) throws -> (TodoSession, TodoFile) {
        let file = TodoFile(path: folder.file("list.json"))
        try file.save(TodoList(titles: ["milk"]))
        let session = TodoSession(
            try file.load().list, file: file, showsCursor: true, saveDelay: .milliseconds(400), scheduler: scheduler)
        _ = try TodoSession(try file.load().list, file: file).perform(.add("bread"))
        _ = try session.perform(.add("tea"))
        return (session, file)
    }

    @Test("q after a change whose save merges another program's change: saved, adopted, and quits at once")
    func quitAfterMerge() throws {
        let (session, file) = try sessionBeforeMerge(TestScheduler())
        let screen = TodoScreen(session: session, width: 80, height: 12, output: { _ in })
        #expect(!screen.handle(.character("q")), "the merged list is in the file: nothing to ask about")
        #expect(session.list.items.map(\.title) == ["milk", "bread", "tea"])
        #expect(try file.load().list == session.list)
    }

    /// A screen over a session saving 400 ms after a change, whose file ("milk") another session changed
    /// ("bread" added, taking the identity 2), after which this screen added "tea" (2 here too; its
    /// save waits), leaving the cursor on it.
    func screenBeforeRenumberingMerge(_ scheduler: TestScheduler) throws -> (TodoScreen, TodoSession, TodoFile) {
        let file = TodoFile(path: folder.file("list.json"))
        try file.save(TodoList(titles: ["milk"]))
        let session = TodoSession(
            try file.load().list, file: file, showsCursor: true, saveDelay: .milliseconds(400), scheduler: scheduler)
        let screen = TodoScreen(session: session, width: 80, height: 12, output: { _ in })
        _ = try TodoSession(try file.load().list, file: file).perform(.add("bread"))
        screen.type([.character("a"), .character("t"), .character("e"), .character("a"), .enter])
        #expect(session.list.items.map(\.id) == [1, 2])
        return (screen, session, file)
    }

    @Test("an edit opened before a merge renumbered its item renames that item, not the other program's")
    func editFollowsRenumbering() throws {
        let scheduler = TestScheduler()
        let (screen, session, file) = try screenBeforeRenumberingMerge(scheduler)
        screen.handle(.character("e"))
        scheduler.advance(by: .milliseconds(400))       // the save merges: "bread" 2, "tea" 3
        screen.type([.character("x"), .enter])
        scheduler.advance(by: .milliseconds(400))
        #expect(session.list.items.map(\.title) == ["milk", "bread", "teax"])
        #expect(try file.load().list.items.map(\.title) == ["milk", "bread", "teax"])
    }

    @Test("the cursor on an item a merge renumbered stays on that item")
    func cursorFollowsRenumbering() throws {
        let scheduler = TestScheduler()
        let (screen, session, file) = try screenBeforeRenumberingMerge(scheduler)
        scheduler.advance(by: .milliseconds(400))
        #expect(session.list.items.map(\.title) == ["milk", "bread", "tea"])
        screen.handle(.character("x"))                  // marks the item under the cursor done
        scheduler.advance(by: .milliseconds(400))
        #expect(try file.load().list.items.map { "\($0.title) \($0.isDone)" } == ["milk false", "bread false", "tea true"])
    }

    @Test("a delayed save that merges another program's change: the session adopts the merged list")
    func mergeAdopted() throws {
        let scheduler = TestScheduler()
        let (session, file) = try sessionBeforeMerge(scheduler)
        scheduler.advance(by: .milliseconds(400))
        #expect(session.list.items.map(\.title) == ["milk", "bread", "tea"])
        #expect(session.mergeNotice.value == "Merged: another window's changes to list.json")
        #expect(!session.history.canUndo)
        #expect(try file.load().list == session.list)
        #expect(!session.hasUnsavedChanges)
        #expect(scheduler.pendingWorkCount == 0, "the adopted list needs no save of its own")
    }
}
