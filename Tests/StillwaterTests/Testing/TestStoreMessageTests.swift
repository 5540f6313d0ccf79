import Synchronization
import Testing
import Stillwater
import StillwaterTesting

struct Score: Equatable, Sendable {
    var points = 0
    var label = "none"
}

/// `score` changes nothing and sends two actions back, each changing one field.
enum ScoreAction: EffectAction, Equatable, Sendable {
    case score, add(Int), rename(String)

    func reduce(into state: inout Score) -> Effect<ScoreAction> {
        switch self {
        case .score:
            return .merge(.send(.add(2)), .send(.rename("two")))
        case .add(let points):
            state.points += points
            return .none
        case .rename(let label):
            state.label = label
            return .none
        }
    }
}

/// An action of a type other than the test store's, dispatched to its store directly.
struct Bonus: Stillwater.Action, Sendable {
    var points: Int
    func reduce(_ state: inout Score) { state.points += points }
}

/// The text of the issues `body` records, joined.
private func failureText(_ body: () async -> Void) async -> String {
    let text = Mutex("")
    await withKnownIssue {
        await body()
    } matching: { issue in
        text.withLock { $0 += issue.comments.map(\.rawValue).joined(separator: "\n") + "\n" }
        return true
    }
    return text.withLock { $0 }
}

/// Whether `text` names each unasserted action, numbered, followed by its own state change.
private func listsBothActionsWithTheirChanges(_ text: String) -> Bool {
    guard let first = text.range(of: "  1. add(2)\n     state (− before, + after):"),
          let second = text.range(of: "  2. rename(\"two\")\n     state (− before, + after):") else { return false }
    let firstChange = text[first.upperBound..<second.lowerBound]
    let secondChange = text[second.upperBound...]
    return firstChange.contains("−   - points: 0") && firstChange.contains("+   - points: 2")
        && !firstChange.contains("+   - label")
        && secondChange.contains("−   - label: \"none\"") && secondChange.contains("+   - label: \"two\"")
}

@Suite("TestStore failure messages")
struct TestStoreMessageTests {
    @Test("finish() names every received action not asserted, each with how it changed the state")
    func finishListsUnasserted() async {
        let store = TestStore(initialState: Score(), actions: ScoreAction.self)
        await store.send(.score)
        let text = await failureText { await store.finish() }
        #expect(text.contains("The test ended with 2 received action(s) not asserted."), "\(text)")
        #expect(listsBothActionsWithTheirChanges(text), "\(text)")
    }

    @Test("a send while received actions wait names each of them with its state change")
    func sendListsPending() async {
        let store = TestStore(initialState: Score(), actions: ScoreAction.self)
        await store.send(.score)
        let text = await failureText { await store.send(.add(1)) { $0 = Score(points: 5, label: "two") } }
        #expect(text.contains("Received 2 action(s) that were not asserted before sending add(1):"), "\(text)")
        #expect(listsBothActionsWithTheirChanges(text), "\(text)")
        await store.finish()
    }

    @Test("an unexpected received action is named with its state change")
    func unexpectedAction() async {
        let store = TestStore(initialState: Score(), actions: ScoreAction.self)
        await store.send(.score)
        let text = await failureText { await store.receive(.rename("two")) }
        #expect(text.contains("Received add(2), but expected rename(\"two\"). The action received:\n  1. add(2)"), "\(text)")
        #expect(text.contains("+   - points: 2"), "\(text)")
        store.skipReceivedActions()
        await store.finish()
    }

    @Test("an action of another type dispatched to the store directly is named, never matched as the tested type")
    func otherTypeIsNamed() async {
        let store = TestStore(initialState: Score(), actions: ScoreAction.self)
        store.store.dispatch(Bonus(points: 7))
        #expect(store.state.points == 7)
        // A predicate that accepts every tested action still does not take it.
        let text = await failureText { await store.receive(where: { _ in true }) }
        #expect(text.contains("Received Bonus(points: 7), but expected an action matching the predicate."), "\(text)")
        #expect(text.contains("  1. Bonus(points: 7)\n     state (− before, + after):"), "\(text)")
        #expect(text.contains("+   - points: 7"), "\(text)")
        await store.finish()
    }

    @Test("a TestStore released without finish() names the received actions not asserted")
    func releaseListsUnasserted() async {
        let text = await failureText {
            let store = TestStore(initialState: Score(), actions: ScoreAction.self)
            await store.send(.score)
        }
        #expect(text.contains("The TestStore was released with 2 received action(s) not asserted"), "\(text)")
        #expect(listsBothActionsWithTheirChanges(text), "\(text)")
    }
}
