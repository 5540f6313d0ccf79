import Testing
@testable import Stillwater
import StillwaterTesting

/// A feature: a counter whose increment also asks for a fact about the new count.
struct CounterFeature: Equatable, Sendable {
    var count = 0
    var fact = ""
}

enum CounterFeatureAction: EffectAction, Equatable, Sendable {
    case increment
    case fact(String)

    func reduce(into state: inout CounterFeature) -> Effect<CounterFeatureAction> {
        switch self {
        case .increment:
            state.count += 1
            return .send(.fact("\(state.count) is odd: \(state.count % 2 == 1)"))
        case .fact(let text):
            state.fact = text
            return .none
        }
    }
}

/// An app embedding two counters and a title.
struct AppFeature: Equatable, Sendable {
    var left = CounterFeature()
    var right = CounterFeature()
    var title = ""
}

enum AppFeatureAction: EffectAction, Equatable, Sendable {
    case left(CounterFeatureAction)
    case right(CounterFeatureAction)
    case rename(String)

    func reduce(into state: inout AppFeature) -> Effect<AppFeatureAction> {
        switch self {
        case .left(let action): return action.reduce(into: &state.left).map(AppFeatureAction.left)
        case .right(let action): return action.reduce(into: &state.right).map(AppFeatureAction.right)
        case .rename(let title):
            state.title = title
            return .none
        }
    }
}

@Suite("ScopedStore")
struct ScopedStoreTests {
    @Test("a scoped store dispatches into its parent, whose effects for the child come back embedded")
    func dispatchesIntoParent() async {
        let seen = Shared<[AppFeatureAction?]>([])
        let logger = Middleware<AppFeature> { _, action, next in
            seen.value.append(action as? AppFeatureAction)
            next(action)
        }
        let store = Store(AppFeature(), middleware: [logger])
        let left = store.scope(state: \.left, action: AppFeatureAction.left)
        left.dispatch(.increment)
        #expect(store.state.value.left == CounterFeature(count: 1, fact: "1 is odd: true"))
        #expect(left.state.value == store.state.value.left)
        #expect(seen.value == [.left(.increment), .left(.fact("1 is odd: true"))])
    }

    @Test("a scoped store's observers are told only when its part changed")
    func deduplicated() async {
        let store = Store(AppFeature())
        let left = store.scope(state: \.left, action: AppFeatureAction.left)
        let recorder = Recorder(left.state.map(\.count))
        let told = Shared(0)
        let subscription = left.observe { _ in told.value += 1 }
        store.dispatch(AppFeatureAction.rename("title"))
        store.dispatch(AppFeatureAction.right(.increment))
        #expect(told.value == 1)
        left.dispatch(.increment)
        #expect(recorder.values == [0, 1])
        let counts = Recorder(left.scope(\.count))
        store.dispatch(AppFeatureAction.right(.increment))
        #expect(counts.values == [1])
        #expect(told.value == 3)
        subscription.cancel()
    }

    @Test("scopes nest, and a scoped store keeps its parent alive")
    func nestedAndLifetime() async {
        struct Root: Equatable { var app = AppFeature() }
        enum RootAction: EffectAction {
            case app(AppFeatureAction)
            func reduce(into state: inout Root) -> Effect<RootAction> {
                switch self {
                case .app(let action): return action.reduce(into: &state.app).map(RootAction.app)
                }
            }
        }
        weak var weakRoot: Store<Root>?
        let right: ScopedStore<CounterFeature, CounterFeatureAction>
        do {
            let root = Store(Root())
            weakRoot = root
            right = root.scope(state: \.app, action: RootAction.app).scope(state: \.right, action: AppFeatureAction.right)
        }
        #expect(weakRoot != nil)
        right.dispatch(.increment)
        right.dispatch(.increment)
        #expect(right.state.value == CounterFeature(count: 2, fact: "2 is odd: false"))
        #expect(weakRoot?.state.value.app.right.count == 2)
    }

    @Test("a scoped dispatch returns the task of the parent's action: finish waits for the child's effects, even through nested scopes")
    func scopedTaskFinishes() async {
        let store = Store(ParentOfLoader())
        let loader = store.scope(state: \.loader, action: ParentOfLoaderAction.loader)
        let task = loader.dispatch(.load(7))
        await task.finish()
        #expect(task.hasFinished)
        #expect(loader.state.value.value == 7)
        let nested = store.scope(state: \.self, action: { $0 }).scope(state: \.loader, action: ParentOfLoaderAction.loader)
        await nested.dispatch(.load(9)).finish()
        #expect(nested.state.value.value == 9)
    }

    @Test("cancelling a scoped dispatch's task cancels the child's effects and drops what they would send")
    func scopedTaskCancels() async {
        let store = Store(ParentOfLoader())
        let loader = store.scope(state: \.loader, action: ParentOfLoaderAction.loader)
        let task = loader.dispatch(.wait)
        #expect(!task.hasFinished)
        #expect(store.runningEffectCount == 1)
        task.cancel()
        await task.finish()
        #expect(task.isCancelled)
        #expect(store.runningEffectCount == 0)
        #expect(loader.state.value.value == 0)
    }

    @Test("a scoped store over plain actions returns a finished task")
    func plainParentFinished() {
        struct Pair: Equatable { var count = 0 }
        enum PairAction: Stillwater.Action {
            case count(Int)
            func reduce(_ state: inout Pair) {
                if case .count(let value) = self { state.count = value }
            }
        }
        let store = Store(Pair())
        let count = store.scope(state: \.count, action: PairAction.count)
        let task = count.dispatch(3)
        #expect(task.hasFinished)
        #expect(count.state.value == 3)
    }

    @Test("the child feature is tested on its own, with a TestStore of its own state and actions")
    func childTestedAlone() async {
        let store = TestStore<CounterFeature, CounterFeatureAction>(initialState: CounterFeature())
        store.timeout = patient
        await store.send(.increment) { $0.count = 1 }
        await store.receive(.fact("1 is odd: true")) { $0.fact = "1 is odd: true" }
        await store.finish()
    }
}

/// A child whose effect answers after a hop of its own task, or waits until cancelled.
struct LoaderFeature: Equatable { var value = 0 }

enum LoaderAction: EffectAction {
    case load(Int), wait, loaded(Int)

    func reduce(into state: inout LoaderFeature) -> Effect<LoaderAction> {
        switch self {
        case .load(let value):
            return .run { send, _ in
                await Task.yield()
                send(.loaded(value))
            }
        case .wait:
            return .run { send, _ in
                try await Task.sleep(for: .seconds(3_600))
                send(.loaded(-1))
            }
        case .loaded(let value):
            state.value = value
            return .none
        }
    }
}

struct ParentOfLoader: Equatable { var loader = LoaderFeature() }

enum ParentOfLoaderAction: EffectAction {
    case loader(LoaderAction)

    func reduce(into state: inout ParentOfLoader) -> Effect<ParentOfLoaderAction> {
        guard case .loader(let action) = self else { return .none }
        return action.reduce(into: &state.loader).map(ParentOfLoaderAction.loader)
    }
}
