import StillwaterTesting
import Testing
@testable import Stillwater

/// An adapter that plays a list view: it keeps its own copy of the rows, changes it only by applying what
/// it is told, and checks at that moment that the controller's items agree with it.
final class RecordingAdapter: ListUpdateAdapter {
    typealias Item = DiffItem
    weak var controller: ListDataController<DiffItem, RecordingAdapter>?
    /// What the view shows.
    private(set) var rows: [DiffItem] = []
    private(set) var calls: [String] = []
    private(set) var problems: [String] = []
    /// When true, updates are committed at once but finished only by `finishHeld()` (an animation).
    var holds = false
    private(set) var held: [ListUpdate<DiffItem>] = []
    var stack = StackSpread()

    func reloadData(_ update: ListUpdate<DiffItem>) {
        calls.append("reload \(update.changeset)")
        show(update) { rows = update.newItems }
    }

    func performBatchUpdates(_ update: ListUpdate<DiffItem>) {
        calls.append("batch \(update.changeset)")
        show(update) { rows.apply(update.changeset) { update.newItems[$0] } }
    }

    private func show(_ update: ListUpdate<DiffItem>, change: () -> Void) {
        stack.sample()
        if controller?.items != rows { problems.append("before commit, the controller's items differ from the rows") }
        if update.oldItems != rows { problems.append("the update does not start from the rows") }
        update.commit()
        change()
        if controller?.items.count != rows.count { problems.append("after commit, counts differ") }
        if controller?.items != rows { problems.append("after commit, items differ from the rows") }
        if holds { held.append(update) } else { update.finish() }
    }

    func finishHeld() {
        let finishing = held
        held = []
        for update in finishing { update.finish() }
    }
}

@Suite("ListDataController")
struct ListDataControllerTests {
    func make() -> (ListDataController<DiffItem, RecordingAdapter>, RecordingAdapter) {
        let adapter = RecordingAdapter()
        let controller = ListDataController(adapter: adapter)
        adapter.controller = controller
        return (controller, adapter)
    }

    @Test("a partial update sends one batch, and the adapter's counts agree with the items when it applies it",
          arguments: Array(UInt64(1)...10))
    func partial(seed: UInt64) {
        let (controller, adapter) = make()
        var random = SeededRandom(seed: seed)
        var completions = 0
        for step in 0..<20 {
            let items = (0..<30).shuffled(using: &random).prefix(Int.random(in: 0...30, using: &random))
                .map { DiffItem(id: $0, value: Int.random(in: 0...1, using: &random)) }
            let isReload = step % 7 == 6
            let changeset = isReload
                ? Changeset(deletes: Array(controller.items.indices), inserts: Array(items.indices))
                : Changeset(from: controller.items, to: items)
            let before = adapter.calls.count
            controller.update(items: items, mode: isReload ? .fullReload : .partial) { completions += 1 }
            #expect(controller.items == items)
            #expect(adapter.rows == items)
            #expect(adapter.calls.count - before == 1)
            #expect(adapter.calls.last == "\(isReload ? "reload" : "batch") \(changeset)")
        }
        #expect(adapter.problems == [])
        #expect(completions == 20)
    }

    @Test("a full reload tells the adapter to reload, with a changeset that replaces everything")
    func fullReload() {
        let (controller, adapter) = make()
        controller.update(items: [DiffItem(id: 1), DiffItem(id: 2)])
        controller.update(items: [DiffItem(id: 2), DiffItem(id: 3), DiffItem(id: 4)], mode: .fullReload)
        #expect(adapter.calls == [
            "batch Changeset(inserts: [0, 1])", "reload Changeset(deletes: [0, 1], inserts: [0, 1, 2])",
        ])
        #expect(adapter.problems == [])
    }

    @Test("an update that changes nothing sends an empty batch, commits, and completes")
    func unchanged() {
        let (controller, adapter) = make()
        controller.update(items: [DiffItem(id: 1)])
        var completed = false
        controller.update(items: [DiffItem(id: 1)]) { completed = true }
        #expect(adapter.calls == ["batch Changeset(inserts: [0])", "batch Changeset()"])
        #expect(completed)
        #expect(!controller.isUpdating)
        #expect(adapter.problems == [])
    }

    @Test("updates asked for while the adapter is busy wait; only the latest is shown, then every completion runs")
    func coalesces() {
        let (controller, adapter) = make()
        adapter.holds = true
        var completed: [String] = []
        controller.update(items: [DiffItem(id: 1)]) { completed.append("first") }
        #expect(controller.isUpdating)
        controller.update(items: [DiffItem(id: 2)]) { completed.append("second") }
        controller.update(items: [DiffItem(id: 1), DiffItem(id: 3)]) { completed.append("third") }
        #expect(adapter.calls.count == 1)
        #expect(controller.items == [DiffItem(id: 1)])

        adapter.finishHeld()
        #expect(completed == ["first"])
        #expect(adapter.calls == ["batch Changeset(inserts: [0])", "batch Changeset(inserts: [1])"])
        adapter.finishHeld()
        #expect(completed == ["first", "second", "third"])
        #expect(controller.items == [DiffItem(id: 1), DiffItem(id: 3)])
        #expect(!controller.isUpdating)
        #expect(adapter.problems == [])
    }

    @Test("calls from an update that already finished do nothing")
    func staleCalls() {
        let (controller, adapter) = make()
        adapter.holds = true
        controller.update(items: [DiffItem(id: 1)])
        let stale = adapter.held[0]
        adapter.finishHeld()
        controller.update(items: [DiffItem(id: 2)])
        stale.commit()
        stale.finish()
        #expect(controller.isUpdating)
        #expect(controller.items == [DiffItem(id: 2)])
        adapter.finishHeld()
        #expect(!controller.isUpdating)
    }

    @Test("an adapter that finishes without committing gets the items committed at finish")
    func finishCommits() {
        final class Forgetful: ListUpdateAdapter {
            func reloadData(_ update: ListUpdate<Int>) { update.finish() }
            func performBatchUpdates(_ update: ListUpdate<Int>) { update.finish() }
        }
        let controller = ListDataController(adapter: Forgetful())
        controller.update(items: [1, 2])
        #expect(controller.items == [1, 2])
    }

    @Test("completions that update again run one after another, without growing the stack")
    func chainedUpdates() {
        let (controller, adapter) = make()
        var remaining = 2_000
        func next() {
            remaining -= 1
            guard remaining > 0 else { return }
            controller.update(items: [DiffItem(id: remaining % 3)], completion: next)
        }
        controller.update(items: [DiffItem(id: 0)], completion: next)
        #expect(remaining == 0)
        #expect(adapter.stack.spread < 64 * 1024)
        #expect(adapter.problems == [])
    }
}
