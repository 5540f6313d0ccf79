import Foundation
import Testing
import XCTest
@testable import Stillwater
import StillwaterTesting

/// A search feature: a debounced, cancellable lookup through an injected client.
struct SearchFeature: Equatable, Sendable {
    var query = ""
    var results: [String] = []
    var failure: String?
    var saved = 0
}

struct SearchClient: Sendable {
    var search: @Sendable (String) async throws -> [String]
}

enum SearchClientKey: DependencyKey {
    static var defaultValue: SearchClient { SearchClient(search: { _ in [] }) }
}

extension Dependencies {
    var searchClient: SearchClient {
        get { self[SearchClientKey.self] }
        set { self[SearchClientKey.self] = newValue }
    }
}

enum SearchFeatureAction: EffectAction, Equatable, Sendable {
    case typed(String)
    case search(String)
    case results([String])
    case failed(String)
    case save
    case saved
    case clear

    func reduce(into state: inout SearchFeature) -> Effect<SearchFeatureAction> {
        switch self {
        case .typed(let text):
            state.query = text
            return .stream { dependencies in
                Observable.timer(.milliseconds(300), scheduler: dependencies.scheduler).map { _ in .search(text) }
            }
            .cancellable(id: "debounce", cancelInFlight: true)
        case .search(let text):
            return .run({ send, dependencies in
                send(.results(try await dependencies.searchClient.search(text)))
            }, catch: { error, send in
                send(.failed("\(error)"))
            })
            .cancellable(id: "search", cancelInFlight: true)
        case .results(let found):
            state.results = found
            state.failure = nil
            return .none
        case .failed(let message):
            state.failure = message
            return .none
        case .save:
            return .run { send, _ in send(.saved) }
        case .saved:
            state.saved += 1
            return .none
        case .clear:
            state.query = ""
            state.results = []
            return .merge(.cancel(id: "debounce"), .cancel(id: "search"))
        }
    }
}

@Suite("TestStore")
struct TestStoreTests {
    func makeStore() -> TestStore<SearchFeature, SearchFeatureAction> {
        let store = TestStore<SearchFeature, SearchFeatureAction>(initialState: SearchFeature()) {
            $0.searchClient = SearchClient(search: { query in
                if query == "boom" { throw TestError(code: 9) }
                return [query + "ui", query + "-nio"]
            })
        }
        store.timeout = patient
        return store
    }

    @Test("send and receive assert every change; a 300 ms debounce takes no real time")
    func debouncedSearch() async {
        let store = makeStore()
        await store.send(.typed("sw")) { $0.query = "sw" }
        store.scheduler.advance(by: .milliseconds(200))
        await store.send(.typed("swift")) { $0.query = "swift" }
        store.scheduler.advance(by: .milliseconds(299))
        #expect(store.scheduler.pendingWorkCount == 1)
        store.scheduler.advance(by: .milliseconds(1))
        // Sent during the advance, on the virtual clock: a 300 ms wait in real time would miss this timeout.
        await store.receive(.search("swift"), timeout: .zero)
        await store.receive(.results(["swiftui", "swift-nio"])) { $0.results = ["swiftui", "swift-nio"] }
        await store.finish()
        #expect(store.scheduler.now == .milliseconds(500))
    }

    @Test("an effect's error, caught by the effect, arrives as an action")
    func caughtError() async {
        let store = makeStore()
        await store.send(.search("boom"))
        await store.receive(.failed("TestError(9)")) { $0.failure = "TestError(9)" }
        await store.finish()
    }

    @Test("receive(where:) matches an action by a predicate")
    func predicate() async {
        let store = makeStore()
        await store.send(.save)
        await store.receive(where: { $0 == .saved }) { $0.saved = 1 }
        await store.finish()
    }

    @Test("cancelling effects by id leaves nothing running")
    func cancelling() async {
        let store = makeStore()
        await store.send(.typed("sw")) { $0.query = "sw" }
        await store.send(.clear) { $0.query = "" }
        store.scheduler.advance(by: .seconds(1))
        await store.finish()
        #expect(store.scheduler.pendingWorkCount == 0)
    }

    @Test("an effect's unhandled failure is reported when the TestStore is released without finish(), in either mode",
          arguments: [true, false])
    func errorReportedAtRelease(exhaustive: Bool) {
        withKnownIssue {
            var store: TestStore<Int, FailingEffect>? = TestStore(initialState: 0)
            store?.exhaustivity = exhaustive ? .on : .off
            store?.send(.start)             // its stream fails while the store starts it
            store = nil
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("which it did not handle")
        }
    }

    @Test("an action another thread has the store reduce while send waits is received, not taken for the sent one")
    func sendWhileAnotherThreadReduces() async {
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        // Holds the store's deliverer inside `.slow` until the test has called send.
        let gate = Middleware<Int> { _, action, next in
            if let action = action as? RaceAction, action == .slow {
                entered.signal()
                proceed.wait()
            }
            next(action)
        }
        let store = TestStore<Int, RaceAction>(initialState: 0, middleware: [gate])
        store.timeout = patient
        let raw = store.store
        DispatchQueue.global().async { raw.dispatch(RaceAction.slow) }
        entered.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) { proceed.signal() }
        await store.send(.fast) { $0 = 11 }           // reduced after .slow, which another thread dispatched
        await store.receive(.slow) { $0 = 1 }
        await store.finish()
    }

    @Test("a send that a middleware drops fails at once, saying so")
    func droppedSend() async {
        let dropFast = Middleware<Int> { _, action, next in
            if let action = action as? RaceAction, action == .fast { return }
            next(action)
        }
        let store = TestStore<Int, RaceAction>(initialState: 0, middleware: [dropFast])
        await withKnownIssue {
            await store.send(.fast)
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("a middleware dropped it")
        }
        await store.send(.slow) { $0 = 1 }
    }

    @Test("a wrong assertion fails with the lines of the expected and actual state that differ")
    func wrongMutation() async {
        let store = makeStore()
        await withKnownIssue {
            await store.send(.typed("sw")) { $0.query = "swift" }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("is not the expected one") && text.contains("− ")
                && text.contains("\"swift\"") && text.contains("+ ") && text.contains("\"sw\"")
        }
        store.scheduler.advance(by: .milliseconds(300))
        await store.receive(.search("sw"))
        await store.receive(.results(["swui", "sw-nio"])) { $0.results = ["swui", "sw-nio"] }
        await store.finish()
    }

    @Test("a change without an assertion fails")
    func missingAssertion() async {
        let store = makeStore()
        await withKnownIssue {
            await store.send(.save)
            await store.send(.typed("x"))
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("but no assertion says how")
                || issue.comments.map(\.rawValue).joined().contains("not asserted before sending")
        }
        store.skipReceivedActions()
        store.exhaustivity = .off
        await store.finish()
    }

    @Test("receiving another action than the one sent back fails")
    func wrongReceive() async {
        let store = makeStore()
        await store.send(.save)
        await withKnownIssue {
            await store.receive(.results([]))
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("Received saved, but expected results([])")
        }
        await store.finish()
    }

    @Test("receiving when no effect sends anything fails after the timeout, naming the running effects")
    func receiveTimesOut() async {
        let store = makeStore()
        await store.send(.typed("sw")) { $0.query = "sw" }
        await withKnownIssue {
            await store.receive(.search("sw"), timeout: .milliseconds(20))
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("1 effect(s) still running; advance the scheduler")
        }
        await store.send(.clear) { $0.query = "" }
        await store.finish()
    }

    @Test("finish fails while an effect still runs or a received action was not asserted")
    func finishIsExhaustive() async {
        let store = makeStore()
        await store.send(.typed("sw")) { $0.query = "sw" }
        await withKnownIssue {
            await store.finish(timeout: .milliseconds(10))
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("1 effect(s) still running")
        }
        let other = makeStore()
        await other.send(.save)
        try? await Task.sleep(for: .milliseconds(20))
        await withKnownIssue {
            await other.finish()
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("1 received action(s) not asserted")
        }
    }

    @Test("a test store released without finish fails while an effect still runs")
    func releaseIsExhaustive() async {
        await withKnownIssue {
            let store = makeStore()
            await store.send(.typed("sw")) { $0.query = "sw" }
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("released with 1 effect(s) still running")
        }
    }

    @Test("an error an effect does not handle fails the test at the next assertion")
    func unhandledError() async {
        enum Failing: EffectAction, Equatable {
            case go
            func reduce(into state: inout SearchFeature) -> Effect<Failing> {
                .stream(Observable<Failing>.failure(TestError(code: 4)))
            }
        }
        let store = TestStore<SearchFeature, Failing>(initialState: SearchFeature())
        store.timeout = patient
        await withKnownIssue {
            await store.send(.go)
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("An effect failed with TestError(4)")
        }
        await store.finish()
    }

    @Test("non-exhaustive: only what the closure sets is compared; skipped actions and running effects pass")
    func nonExhaustive() async {
        let store = makeStore()
        store.exhaustivity = .off
        await store.send(.typed("sw"))
        store.scheduler.advance(by: .milliseconds(300))
        await store.receive(.results(["swui", "sw-nio"])) { $0.results = ["swui", "sw-nio"] }
        await store.send(.typed("more"))
        await store.finish(timeout: .milliseconds(10))
        #expect(store.state.query == "more")
    }

    @Test("non-exhaustive finish stops waiting, without failing, when the running effects wait on the scheduler",
          arguments: [Waiting.timer, Waiting.nap])
    func nonExhaustiveFinishOnVirtualTime(action: Waiting) async {
        let store = TestStore<Int, Waiting>(initialState: 0)
        store.exhaustivity = .off
        await store.send(action)
        let start = ContinuousClock.now
        // Far below the timeout even when the other suites running meanwhile starve this task for seconds
        // (the whole suite took 32 s on a loaded CI machine, where it takes 7 s on an idle one).
        await store.finish(timeout: .seconds(300))
        #expect(ContinuousClock.now - start < .seconds(150))
        #expect(store.scheduler.pendingWorkCount == 1)
        #expect(store.state == 0)
    }

    @Test("non-exhaustive finish still waits for a task that runs in real time beside an effect waiting on the scheduler")
    func nonExhaustiveFinishWaitsForTasks() async {
        let store = TestStore<Int, Waiting>(initialState: 0)
        store.exhaustivity = .off
        await store.send(.timer)
        await store.send(.work)
        // The task's 300 ms sleep can end many seconds late while the full suite runs on two cores.
        await store.finish(timeout: .seconds(300))
        #expect(store.state == 1)
        #expect(store.scheduler.pendingWorkCount == 1)
    }

    @Test("exhaustive finish reports an effect waiting on the scheduler as running, and says to advance it")
    func exhaustiveFinishOnVirtualTime() async {
        let store = TestStore<Int, Waiting>(initialState: 0)
        await store.send(.timer)
        await withKnownIssue {
            await store.finish(timeout: .milliseconds(100))
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("1 effect(s) still running") && text.contains("1 piece(s) of pending work")
        }
    }

    @Test("a run effect that sleeps on the scheduler is received once the clock passes its wake-up time")
    func sleepingRun() async {
        enum Nap: EffectAction, Equatable {
            case nap, woke
            func reduce(into naps: inout Int) -> Effect<Nap> {
                switch self {
                case .nap:
                    return .run { send, dependencies in
                        try await dependencies.scheduler.sleep(for: .seconds(10))
                        send(.woke)
                    }
                case .woke:
                    naps += 1
                    return .none
                }
            }
        }
        let store = TestStore<Int, Nap>(initialState: 0)
        store.timeout = patient
        await store.send(.nap)
        #expect(await eventually { store.scheduler.pendingWorkCount == 1 })
        store.scheduler.advance(by: .seconds(9))
        await withKnownIssue {
            await store.receive(.woke, timeout: .milliseconds(20))
        }
        store.scheduler.advance(by: .seconds(1))
        await store.receive(.woke) { $0 = 1 }
        await store.finish()
    }

    @Test("the diff marks the lines only in the expected state with − and those only in the actual one with +, − first")
    func diffLines() async {
        let expected = SearchFeature(query: "a", results: ["x"])
        let actual = SearchFeature(query: "b", results: ["x"])
        let text = StateDiffProbe.lines(expected, actual)
        #expect(text.contains("− ") && text.contains("+ "))
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("−") }.count == 1)
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("+") }.count == 1)
        #expect(text.split(separator: "\n").firstIndex { $0.hasPrefix("−") }!
                < text.split(separator: "\n").firstIndex { $0.hasPrefix("+") }!)
    }

    @Test("a 20 000-line state with one changed line gives a diff of that line and a few around it")
    func bigStateDiff() async {
        let expected = BigState(values: Array(0..<20_000))
        var actual = expected
        actual.values[12_345] = -1
        let text = StateDiffProbe.lines(expected, actual)
        let lines = text.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("−") } == ["−     - 12345"])
        #expect(lines.filter { $0.hasPrefix("+") } == ["+     - -1"])
        #expect(lines.count < 20)
        #expect(text.contains("unchanged lines") && text.contains("- 12342") && text.contains("- 12348"))
        #expect(text.count < 1_000)     // the action, which holds the whole state, is named in brief
    }

    @Test("two big states that differ everywhere are listed unaligned, cut short, instead of aligned at n·m cost")
    func dissimilarStateDiff() async {
        let expected = BigState(values: Array(0..<3_000))
        let actual = BigState(values: Array(100_000..<103_000))
        let text = StateDiffProbe.lines(expected, actual)
        let lines = text.split(separator: "\n")
        #expect(text.contains("The states differ in 3000 expected and 3000 actual lines, too many to align"))
        #expect(lines.filter { $0.hasPrefix("−") }.count == 100)
        #expect(lines.filter { $0.hasPrefix("+") }.count == 100)
        #expect(text.contains("… 2900 more expected lines") && text.contains("… 2900 more actual lines"))
    }

    @Test("equal dictionaries and sets in the states are shown in one order: only the changed entry differs")
    func unorderedDiff() async {
        var expected = Scores()
        var actual = Scores()
        for index in 0..<50 {
            expected.byName["player\(index)"] = index
            expected.tags.insert("tag\(index)")
        }
        for index in (0..<50).reversed() {
            actual.byName["player\(index)"] = index == 7 ? 70 : index
            actual.tags.insert("tag\(index)")
        }
        let lines = StateDiffProbe.lines(expected, actual).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("−") }.map { $0.drop { $0 != "-" } } == ["- value: 7"])
        #expect(lines.filter { $0.hasPrefix("+") }.map { $0.drop { $0 != "-" } } == ["- value: 70"])
        #expect(lines.contains { $0.hasSuffix("- key: \"player7\"") })
    }

    @Test("an object that holds a dictionary and refers to itself is dumped once, not forever")
    func cyclicDiff() async {
        let first = Loop(tags: ["a": 1, "b": 2])
        let second = Loop(tags: ["a": 1, "b": 3])
        let lines = StateDiffProbe.lines(first, second).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("−") }.map { $0.drop { $0 != "-" } } == ["- value: 2"])
        #expect(lines.filter { $0.hasPrefix("+") }.map { $0.drop { $0 != "-" } } == ["- value: 3"])
    }

    @Test("a failure between states whose dumps are the same says so, instead of showing no changed line")
    func sameDumpDiff() async {
        let text = StateDiffProbe.lines(Unequal(), Unequal())
        #expect(text.contains("the dumps of the two states are the same"))
    }
}

/// A state whose dump has one line per value.
struct BigState: Equatable, Sendable {
    var values: [Int]
}

/// A state with a dictionary and a set, whose dumps list their entries in an order of their own.
struct Scores: Equatable, Sendable {
    var byName: [String: Int] = [:]
    var tags: Set<String> = []
}

/// An object whose `next` is itself, compared by identity.
final class Loop: Equatable, @unchecked Sendable {
    var tags: [String: Int]
    var next: Loop?

    init(tags: [String: Int]) {
        self.tags = tags
        next = self
    }

    static func == (lhs: Loop, rhs: Loop) -> Bool { lhs === rhs }
}

/// A state never equal to itself, as one holding a `Double.nan` would be.
struct Unequal: Equatable, Sendable {
    var value = 0
    static func == (lhs: Unequal, rhs: Unequal) -> Bool { false }
}

/// Reaches the test store's diff through a failing send, so the test reads what a user would see.
enum StateDiffProbe {
    static func lines<State: Equatable & Sendable>(_ expected: State, _ actual: State) -> String {
        let store = TestStore<State, Replace<State>>(initialState: expected)
        let text = Shared("")
        withKnownIssue {
            store.send(.to(actual)) { $0 = expected }
        } matching: { issue in
            text.value = issue.comments.map(\.rawValue).joined()
            return true
        }
        return text.value
    }
}

/// An action that replaces the whole state.
enum Replace<State: Equatable & Sendable>: Action, Sendable {
    case to(State)

    func reduce(_ state: inout State) {
        if case .to(let value) = self { state = value }
    }
}

/// The same feature under XCTest: failures go to XCTFail there, passing tests pass.
final class TestStoreXCTests: XCTestCase {
    func testDebouncedSearchUnderXCTest() async {
        let store = TestStore<SearchFeature, SearchFeatureAction>(initialState: SearchFeature()) {
            $0.searchClient = SearchClient(search: { [$0] })
        }
        store.timeout = patient
        await store.send(.typed("a")) { $0.query = "a" }
        store.scheduler.advance(by: .milliseconds(300))
        await store.receive(.search("a"))
        await store.receive(.results(["a"])) { $0.results = ["a"] }
        await store.finish()
    }
}

/// How long the tests wait for an effect's task: a passing test never waits it out, and the full suite on
/// two cores can keep a task from running for several seconds, past the one-second default.
let patient = Duration.seconds(30)

/// An action whose stream effect fails at once, and whose failure nobody handles.
enum FailingEffect: EffectAction, Equatable, Sendable {
    case start

    func reduce(into state: inout Int) -> Effect<FailingEffect> {
        .stream(Observable<FailingEffect>.failure(TestError(code: 1)))
    }
}

/// Effects that wait: on the test store's scheduler (a timer stream, a task sleeping on it), or in real
/// time (a task); each sends `.done` at the end.
enum Waiting: EffectAction, Equatable, Sendable {
    case timer, nap, work, done

    func reduce(into state: inout Int) -> Effect<Waiting> {
        switch self {
        case .timer:
            return .stream { dependencies in
                Observable.timer(.seconds(1), scheduler: dependencies.scheduler).map { _ in .done }
            }
        case .nap:
            return .run { send, dependencies in
                try await dependencies.scheduler.sleep(for: .seconds(1))
                send(.done)
            }
        case .work:
            return .run { send, _ in
                try await Task.sleep(for: .milliseconds(300))
                send(.done)
            }
        case .done:
            state += 1
            return .none
        }
    }
}

/// Two plain actions for the tests of how `send` tells its own action from others.
enum RaceAction: EffectAction, Equatable, Sendable {
    case slow, fast

    func reduce(into state: inout Int) -> Effect<RaceAction> {
        state += self == .slow ? 1 : 10
        return .none
    }
}
