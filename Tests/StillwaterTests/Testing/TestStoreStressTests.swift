import Testing
@testable import Stillwater
import StillwaterTesting

/// A search client: answers a query after a few hops of its own task, as an async client would.
struct QueryClient: Sendable {
    var search: @Sendable (String) async throws -> [String]
}

enum QueryClientKey: DependencyKey {
    static var defaultValue: QueryClient { QueryClient { _ in [] } }
}

extension Dependencies {
    var queryClient: QueryClient {
        get { self[QueryClientKey.self] }
        set { self[QueryClientKey.self] = newValue }
    }
}

struct DebouncedSearch: Equatable {
    var query = ""
    var results: [String] = []
}

/// The debounced search a TCA user writes first: each keystroke restarts a 300 ms wait (a `run` effect
/// sleeping on the scheduler, cancelled in flight), then a `run` request through the client.
enum DebouncedSearchAction: EffectAction, Equatable {
    case typed(String), search(String), results([String])

    func reduce(into state: inout DebouncedSearch) -> Effect<DebouncedSearchAction> {
        switch self {
        case .typed(let query):
            state.query = query
            return .run { send, dependencies in
                try await dependencies.scheduler.sleep(for: .milliseconds(300))
                send(.search(query))
            }
            .cancellable(id: "debounce", cancelInFlight: true)
        case .search(let query):
            return .run { send, dependencies in
                send(.results(try await dependencies.queryClient.search(query)))
            }
            .cancellable(id: "request", cancelInFlight: true)
        case .results(let found):
            state.results = found
            return .none
        }
    }
}

@Suite("TestStore runs effects' tasks itself")
struct TestStoreStressTests {
    /// One run of the search test, with no real time allowed: `timeout` is zero, so a receive or a finish
    /// that had to wait for a task instead of running it fails.
    private func searchOnce() async {
        let store = TestStore(initialState: DebouncedSearch(), actions: DebouncedSearchAction.self) {
            $0.queryClient = QueryClient { query in
                await Task.yield()
                await Task.yield()
                return [query + "ui", query + "-nio"]
            }
        }
        store.timeout = .zero
        await store.send(.typed("s")) { $0.query = "s" }
        store.scheduler.advance(by: .milliseconds(200))
        await store.send(.typed("sw")) { $0.query = "sw" }
        store.scheduler.advance(by: .milliseconds(299))
        await store.send(.typed("swi")) { $0.query = "swi" }
        store.scheduler.advance(by: .milliseconds(300))
        await store.receive(.search("swi"))
        await store.receive(.results(["swiui", "swi-nio"])) { $0.results = ["swiui", "swi-nio"] }
        await store.finish()
    }

    @Test("a debounced search with a run request passes 1,000 times in a row without waiting in real time")
    func debouncedSearchThousandTimes() async {
        for _ in 0..<1_000 { await searchOnce() }
    }

    @Test("a run effect's sleep on the scheduler is scheduled when send returns")
    func sleepScheduledBySend() async {
        let store = TestStore(initialState: DebouncedSearch(), actions: DebouncedSearchAction.self)
        store.timeout = .zero
        await store.send(.typed("a")) { $0.query = "a" }
        #expect(store.scheduler.pendingWorkCount == 1)
        store.exhaustivity = .off
    }
}
