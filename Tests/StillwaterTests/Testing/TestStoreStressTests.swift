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

/// What an effect's task captures, to see when the task is freed.
final class CapturedByTask: Sendable {}

/// An effect that sleeps an hour on the scheduler, holding what its action carries.
enum SleepingAction: EffectAction, Equatable {
    case sleep(CapturedByTask)

    static func == (lhs: SleepingAction, rhs: SleepingAction) -> Bool {
        switch (lhs, rhs) { case (.sleep(let left), .sleep(let right)): left === right }
    }

    func reduce(into state: inout Int) -> Effect<SleepingAction> {
        guard case .sleep(let captured) = self else { return .none }
        state += 1
        return .run { _, dependencies in
            try await dependencies.scheduler.sleep(for: .seconds(3_600))
            withExtendedLifetime(captured) {}
        }
    }
}

@Suite("A released TestStore's tasks end")
struct TestStoreReleaseTests {
    /// Starts the sleeping effect in a test store that is released on return: with `send` (the task runs
    /// on the test's thread until it sleeps) or with the store's own `dispatch` (its first job is still
    /// queued on the test store's executor). Returns a weak reference to what the task captured.
    private func startSleeper(exhaustive: Bool, bySend: Bool) async -> () -> CapturedByTask? {
        let captured = CapturedByTask()
        weak let watched = captured
        let store = TestStore(initialState: 0, actions: SleepingAction.self)
        store.exhaustivity = exhaustive ? .on : .off
        if bySend {
            await store.send(.sleep(captured)) { $0 = 1 }
            #expect(store.scheduler.pendingWorkCount == 1)
        } else {
            store.store.dispatch(SleepingAction.sleep(captured))
        }
        return { watched }
    }

    /// Waits, in steps of a millisecond and for ten seconds at most, for `watched` to become `nil`.
    private func isFreed(_ watched: () -> CapturedByTask?) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while watched() != nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        return watched() == nil
    }

    @Test("a task asleep on the scheduler when its test store is released ends and frees what it captured",
          arguments: [true, false])
    func suspendedTaskEnds(bySend: Bool) async {
        let watched = await startSleeper(exhaustive: false, bySend: bySend)
        #expect(await isFreed(watched))
    }

    @Test("in exhaustive mode the release still fails the test for the running effect, and the task still ends")
    func exhaustiveReleaseFailsAndEnds() async {
        var watched: () -> CapturedByTask? = { nil }
        await withKnownIssue {
            watched = await startSleeper(exhaustive: true, bySend: true)
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("released with 1 effect(s) still running")
        }
        #expect(await isFreed(watched))
    }
}
