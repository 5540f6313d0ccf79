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

    @Test("the child feature is tested on its own, with a TestStore of its own state and actions")
    func childTestedAlone() async {
        let store = TestStore<CounterFeature, CounterFeatureAction>(initialState: CounterFeature())
        store.timeout = patient
        await store.send(.increment) { $0.count = 1 }
        await store.receive(.fact("1 is odd: true")) { $0.fact = "1 is odd: true" }
        await store.finish()
    }
}
