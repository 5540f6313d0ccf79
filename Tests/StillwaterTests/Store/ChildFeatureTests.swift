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

    func reduce(into state: inout Board, dependencies: Dependencies) -> Effect<BoardAction> {
        switch self {
        case .add(let id): state.tickers.append(Ticker(id: id)); return .none
        case .remove(let id): state.tickers.removeAll { $0.id == id }; return .none
        case .open(let id): state.detail = Ticker(id: id); return .none
        case .close: state.detail = nil; return .none
        case .ticker(let id, let action):
            return .forEach(\.tickers, id: id, action, in: &state, dependencies: dependencies) { .ticker(id, $0) }
        case .detail(let action):
            return .ifLet(\.detail, action, in: &state, dependencies: dependencies) { .detail($0) }
        }
    }
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
