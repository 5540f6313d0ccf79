import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

struct Ticker: Identifiable, Equatable, Sendable {
    var id: Int
    var ticks = 0
}

enum TickerAction: EffectAction, Equatable, Sendable {
    case start, tick

    func reduce(into ticker: inout Ticker, dependencies: Dependencies) -> Effect<TickerAction> {
        switch self {
        case .start:
            return .stream { dependencies in
                Observable.interval(.seconds(1), scheduler: dependencies.scheduler).map { _ in TickerAction.tick }
            }
        case .tick:
            ticker.ticks += 1
            return .none
        }
    }
}

struct Board: Equatable, Sendable {
    var tickers: [Ticker] = []
    var detail: Ticker?
}

enum BoardAction: EffectAction, Equatable, Sendable {
    case add(Int), remove(Int), ticker(Int, TickerAction), open(Int), close, detail(TickerAction)

    func reduce(into state: inout Board) -> Effect<BoardAction> {
        switch self {
        case .add(let id): state.tickers.append(Ticker(id: id)); return .none
        case .remove(let id): state.tickers.removeAll { $0.id == id }; return .none
        case .open(let id): state.detail = Ticker(id: id); return .none
        case .close: state.detail = nil; return .none
        case .ticker(let id, let action):
            return .forEach(\.tickers, id: id, action, in: &state) { .ticker(id, $0) }
        case .detail(let action):
            return .ifLet(\.detail, action, in: &state) { .detail($0) }
        }
    }
}

/// A shelf of tickers with an optional detail: a child feature with child features of its own.
struct Shelf: Identifiable, Equatable, Sendable {
    var id: Int
    var tickers: [Ticker] = []
    var detail: Ticker?
}

enum ShelfAction: EffectAction, Equatable, Sendable {
    case ticker(Int, TickerAction), removeTicker(Int), detail(TickerAction), close

    func reduce(into shelf: inout Shelf) -> Effect<ShelfAction> {
        switch self {
        case .ticker(let id, let action):
            return .forEach(\.tickers, id: id, action, in: &shelf) { .ticker(id, $0) }
        case .removeTicker(let id): shelf.tickers.removeAll { $0.id == id }; return .none
        case .detail(let action):
            return .ifLet(\.detail, action, in: &shelf) { .detail($0) }
        case .close: shelf.detail = nil; return .none
        }
    }
}

/// Shelves in a wall that may be taken down: three levels of child features (`ifLet`, then `forEach`
/// twice).
struct House: Equatable, Sendable {
    var wall: [Shelf]? = []
}

enum HouseAction: EffectAction, Equatable, Sendable {
    case shelf(Int, ShelfAction), removeShelf(Int), takeDown, wall(WallAction), nothing

    func reduce(into house: inout House) -> Effect<HouseAction> {
        switch self {
        case .shelf(let id, let action):
            return .ifLet(\.wall, WallAction.shelf(id, action), in: &house) { .wall($0) }
        case .wall(let action):
            return .ifLet(\.wall, action, in: &house) { .wall($0) }
        case .removeShelf(let id): house.wall?.removeAll { $0.id == id }; return .none
        case .takeDown: house.wall = nil; return .none
        case .nothing: return .none
        }
    }
}

enum WallAction: EffectAction, Equatable, Sendable {
    case shelf(Int, ShelfAction)

    func reduce(into shelves: inout [Shelf]) -> Effect<WallAction> {
        guard case .shelf(let id, let action) = self else { return .none }
        return .forEach(\.self, id: id, action, in: &shelves) { .shelf(id, $0) }
    }
}

/// A removal of a shelf by a plain action (no effects): noticed right after it is reduced.
struct RemoveShelfPlainly: Stillwater.Action {
    let id: Int
    func reduce(_ house: inout House) { house.wall?.removeAll { $0.id == id } }
}

/// A removal of several tickers at once by a plain action: noticed right after it is reduced.
struct RemoveTickersPlainly: Stillwater.Action {
    let ids: Set<Int>
    func reduce(_ board: inout Board) { board.tickers.removeAll { ids.contains($0.id) } }
}

@Suite("Child features: forEach and ifLet")
struct ChildFeatureTests {
    private func makeStore() -> (Store<Board>, TestScheduler, ErrorLines) {
        let scheduler = TestScheduler()
        let lines = ErrorLines()
        let store = Store(Board(), dependencies: Dependencies { $0.scheduler = scheduler },
                          onEffectError: { lines.append("\($0)") })
        return (store, scheduler, lines)
    }

    @Test("a child action reaches its element by id, and its effect's actions come back to that element")
    func routesById() {
        let (store, scheduler, lines) = makeStore()
        store.dispatch(BoardAction.add(1))
        store.dispatch(BoardAction.add(2))
        store.dispatch(BoardAction.ticker(2, .start))
        scheduler.advance(by: .seconds(2))
        #expect(store.state.value.tickers == [Ticker(id: 1), Ticker(id: 2, ticks: 2)])
        #expect(lines.all.isEmpty)
        #expect(store.runningEffectCount == 1)
    }

    @Test("removing an element cancels its effects and leaves the others running")
    func removalCancels() {
        let (store, scheduler, _) = makeStore()
        store.dispatch(BoardAction.add(1))
        store.dispatch(BoardAction.add(2))
        store.dispatch(BoardAction.ticker(1, .start))
        store.dispatch(BoardAction.ticker(2, .start))
        scheduler.advance(by: .seconds(1))
        store.dispatch(BoardAction.remove(1))
        #expect(store.runningEffectCount == 1)
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.tickers == [Ticker(id: 2, ticks: 2)])
        // The same id added again starts clean: the old effect is gone for good.
        store.dispatch(BoardAction.add(1))
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.tickers.first { $0.id == 1 }?.ticks == 0)
    }

    @Test("removing some of many running rows at once by a plain action, the last one among them, cancels exactly those")
    func removalOfSeveralRows() {
        let (store, scheduler, _) = makeStore()
        for id in 1...6 { store.dispatch(BoardAction.add(id)) }
        for id in 1...6 { store.dispatch(BoardAction.ticker(id, .start)) }
        scheduler.advance(by: .seconds(1))
        #expect(store.runningEffectCount == 6)
        store.dispatch(RemoveTickersPlainly(ids: [2, 4, 6]))
        // A plain action starts no effects, but the store looks after it all the same.
        #expect(store.runningEffectCount == 3)
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.tickers == [Ticker(id: 1, ticks: 2), Ticker(id: 3, ticks: 2), Ticker(id: 5, ticks: 2)])
        // The rows that stayed are still watched: removing the first one later cancels it alone.
        store.dispatch(BoardAction.remove(1))
        #expect(store.runningEffectCount == 2)
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.tickers == [Ticker(id: 3, ticks: 3), Ticker(id: 5, ticks: 3)])
    }

    @Test("a child action for an id that is gone is dropped and reported, naming the action, the id and the collection")
    func missingIdReported() {
        let (store, _, lines) = makeStore()
        store.dispatch(BoardAction.add(1))
        store.dispatch(BoardAction.ticker(7, .tick))
        #expect(store.state.value.tickers == [Ticker(id: 1)])
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("tick arrived for id 7, which \\Board.tickers no longer holds") == true)
    }

    @Test("an optional child's effects are cancelled when it becomes nil; an action while nil is reported")
    func ifLet() {
        let (store, scheduler, lines) = makeStore()
        store.dispatch(BoardAction.open(5))
        store.dispatch(BoardAction.detail(.start))
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.detail?.ticks == 1)
        store.dispatch(BoardAction.close)
        #expect(store.runningEffectCount == 0)
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.detail == nil)
        store.dispatch(BoardAction.detail(.tick))
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("while \\Board.detail is nil") == true)
    }

    /// A store of a house whose wall holds shelves 1 and 2, each with tickers 1 and 2 (the same ids in
    /// both shelves) and a detail ticker 9.
    private func makeHouse() -> (Store<House>, TestScheduler) {
        let scheduler = TestScheduler()
        let shelves = [1, 2].map { Shelf(id: $0, tickers: [Ticker(id: 1), Ticker(id: 2)], detail: Ticker(id: 9)) }
        let store = Store(House(wall: shelves), dependencies: Dependencies { $0.scheduler = scheduler })
        return (store, scheduler)
    }

    private func ticks(_ store: Store<House>, shelf: Int, ticker: Int) -> Int? {
        store.state.value.wall?.first { $0.id == shelf }?.tickers.first { $0.id == ticker }?.ticks
    }

    @Test("removing a nested element (a ticker of a shelf) cancels its effects only, not those of the same id in another shelf")
    func nestedRemovalCancels() {
        let (store, scheduler) = makeHouse()
        store.dispatch(HouseAction.shelf(1, .ticker(1, .start)))
        store.dispatch(HouseAction.shelf(1, .ticker(2, .start)))
        store.dispatch(HouseAction.shelf(2, .ticker(1, .start)))
        scheduler.advance(by: .seconds(1))
        store.dispatch(HouseAction.shelf(1, .removeTicker(1)))
        #expect(store.runningEffectCount == 2)
        scheduler.advance(by: .seconds(1))
        #expect(ticks(store, shelf: 1, ticker: 1) == nil)
        #expect(ticks(store, shelf: 1, ticker: 2) == 2)
        #expect(ticks(store, shelf: 2, ticker: 1) == 2)
        // Removing a middle level takes its nested rows' effects with it.
        store.dispatch(HouseAction.removeShelf(1))
        #expect(store.runningEffectCount == 1)
        // And the outermost (an ifLet) all of them.
        store.dispatch(HouseAction.takeDown)
        #expect(store.runningEffectCount == 0)
        scheduler.advance(by: .seconds(5))
        #expect(store.state.value.wall == nil)
    }

    @Test("a nested optional child (a shelf's detail) has its effects cancelled when it becomes nil")
    func nestedIfLetCancels() {
        let (store, scheduler) = makeHouse()
        store.dispatch(HouseAction.shelf(1, .detail(.start)))
        store.dispatch(HouseAction.shelf(2, .detail(.start)))
        scheduler.advance(by: .seconds(1))
        store.dispatch(HouseAction.shelf(1, .close))
        #expect(store.runningEffectCount == 1)
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.wall?.map(\.detail?.ticks) == [nil, 2])
    }

    @Test("a nested row removed by a plain Action has its effect cancelled before the next action")
    func plainRemovalCancelsAtOnce() {
        let (store, scheduler) = makeHouse()
        store.dispatch(HouseAction.shelf(1, .ticker(1, .start)))
        store.dispatch(RemoveShelfPlainly(id: 1))
        #expect(store.runningEffectCount == 0)
        scheduler.advance(by: .seconds(1))
        #expect(store.state.value.wall?.map(\.id) == [2])
    }

    @Test("a row removed by a plain Action has its effect cancelled before the next action is reduced")
    func plainRemovalBeforeNextAction() {
        let subject = PublishSubject<Void>()
        let lines = ErrorLines()
        let store = Store(Feed(), dependencies: Dependencies(), onEffectError: { lines.append("\($0)") })
        store.dispatch(FeedAction.add(1))
        store.dispatch(FeedAction.row(1, .listen(subject)))
        subject.send(())
        #expect(store.state.value.rows == [FeedRow(id: 1, heard: 1)])
        // The effect sends again while observers are told of the removal: that action is queued behind
        // the removal, and by its turn the effect was cancelled, so it is dropped (neither reduced nor
        // reported as an action for a missing row).
        let watcher = store.state.observe { feed in
            if feed.rows.isEmpty { subject.send(()) }
        }
        store.dispatch(RemoveFeedRowPlainly(id: 1))
        #expect(store.runningEffectCount == 0)
        subject.send(())
        #expect(lines.all.isEmpty)
        withExtendedLifetime(watcher) {}
    }

    @Test("two collections whose key paths print alike keep separate effects")
    func collectionsThatPrintAlike() {
        let first = PublishSubject<Void>()
        let second = PublishSubject<Void>()
        let store = Store(Feeds(), dependencies: Dependencies())
        // The two key paths below print the same text.
        #expect("\(\Feeds.lists[0])" == "\(\Feeds.lists[1])")
        store.dispatch(FeedsAction.row(list: 0, id: 1, .listen(first)))
        store.dispatch(FeedsAction.row(list: 1, id: 1, .listen(second)))
        #expect(store.runningEffectCount == 2)
        // Removing row 1 of the first list cancels its effect alone.
        store.dispatch(FeedsAction.remove(list: 0, id: 1))
        #expect(store.runningEffectCount == 1)
        first.send(())
        second.send(())
        #expect(store.state.value.lists == [[], [FeedRow(id: 1, heard: 1)]])
        // A cancel by id in one row reaches its own effect only.
        store.dispatch(FeedsAction.add(list: 0, id: 1))
        store.dispatch(FeedsAction.row(list: 0, id: 1, .listen(first)))
        store.dispatch(FeedsAction.row(list: 0, id: 1, .stop))
        first.send(())
        second.send(())
        #expect(store.state.value.lists == [[FeedRow(id: 1)], [FeedRow(id: 1, heard: 2)]])
    }

    @Test("an ifLet child and a forEach collection whose key paths print alike keep separate effects")
    func optionalsThatPrintAlike() {
        let first = PublishSubject<Void>()
        let second = PublishSubject<Void>()
        let store = Store(Feeds(), dependencies: Dependencies())
        #expect("\(\Feeds.details[0])" == "\(\Feeds.details[1])")
        store.dispatch(FeedsAction.detail(0, .listen(first)))
        store.dispatch(FeedsAction.detail(1, .listen(second)))
        #expect(store.runningEffectCount == 2)
        store.dispatch(FeedsAction.closeDetail(0))
        #expect(store.runningEffectCount == 1)
        second.send(())
        #expect(store.state.value.details == [nil, FeedRow(id: 0, heard: 1)])
    }

    @Test("a TestStore test that removes a nested element ends with no effect running, without a cancel by hand")
    func nestedRemovalInTestStore() async {
        let shelves = [Shelf(id: 1, tickers: [Ticker(id: 1)])]
        let store = TestStore(initialState: House(wall: shelves), actions: HouseAction.self)
        await store.send(.shelf(1, .ticker(1, .start)))
        store.scheduler.advance(by: .seconds(1))
        await store.receive(.wall(.shelf(1, .ticker(1, .tick)))) { $0.wall?[0].tickers[0].ticks = 1 }
        await store.send(.shelf(1, .removeTicker(1))) { $0.wall?[0].tickers = [] }
        await store.finish()
    }

    @Test("a TestStore reports a child action for a missing element as a failure")
    func testStoreReports() async {
        let store = TestStore(initialState: Board(), actions: BoardAction.self)
        await withKnownIssue {
            await store.send(.ticker(3, .tick))
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("no longer holds")
        }
    }
}

/// The lines a store's `onEffectError` handler was given.
final class ErrorLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A row that counts what its effect heard.
struct FeedRow: Identifiable, Equatable, Sendable {
    var id: Int
    var heard = 0
}

enum FeedRowAction: EffectAction, Sendable {
    case listen(PublishSubject<Void>), heard, stop

    func reduce(into row: inout FeedRow) -> Effect<FeedRowAction> {
        switch self {
        case .listen(let subject): return .stream(subject.map { FeedRowAction.heard }).cancellable(id: "listen")
        case .heard: row.heard += 1; return .none
        case .stop: return .cancel(id: "listen")
        }
    }
}

struct Feed: Equatable, Sendable {
    var rows: [FeedRow] = []
}

enum FeedAction: EffectAction, Sendable {
    case add(Int), row(Int, FeedRowAction)

    func reduce(into feed: inout Feed) -> Effect<FeedAction> {
        switch self {
        case .add(let id): feed.rows.append(FeedRow(id: id)); return .none
        case .row(let id, let action): return .forEach(\.rows, id: id, action, in: &feed) { .row(id, $0) }
        }
    }
}

struct RemoveFeedRowPlainly: Stillwater.Action {
    let id: Int
    func reduce(_ feed: inout Feed) { feed.rows.removeAll { $0.id == id } }
}

/// Two lists and two optional details reached through subscripts: key paths that print alike.
struct Feeds: Equatable, Sendable {
    var lists: [[FeedRow]] = [[FeedRow(id: 1)], [FeedRow(id: 1)]]
    var details: [FeedRow?] = [FeedRow(id: 0), FeedRow(id: 0)]
}

enum FeedsAction: EffectAction, Sendable {
    case add(list: Int, id: Int), remove(list: Int, id: Int), row(list: Int, id: Int, FeedRowAction)
    case detail(Int, FeedRowAction), closeDetail(Int)

    func reduce(into feeds: inout Feeds) -> Effect<FeedsAction> {
        switch self {
        case .add(let list, let id): feeds.lists[list].append(FeedRow(id: id)); return .none
        case .remove(let list, let id): feeds.lists[list].removeAll { $0.id == id }; return .none
        case .row(let list, let id, let action):
            return .forEach(\.lists[list], id: id, action, in: &feeds) { .row(list: list, id: id, $0) }
        case .detail(let index, let action):
            return .ifLet(\.details[index], action, in: &feeds) { .detail(index, $0) }
        case .closeDetail(let index): feeds.details[index] = nil; return .none
        }
    }
}
