import Testing
@testable import Stillwater
import StillwaterTesting

struct Hop: Equatable, Sendable {
    var hopped = false
}

/// An effect with a step on the main actor: in a `@MainActor` test, that step can run only while the
/// test is suspended.
enum HopAction: EffectAction, Equatable, Sendable {
    case start, hopped

    func reduce(into state: inout Hop) -> Effect<HopAction> {
        switch self {
        case .start:
            return .run { send, _ in
                await MainActor.run {}
                send(.hopped)
            }
        case .hopped:
            state.hopped = true
            return .none
        }
    }
}

@Suite("TestStore: await send")
struct TestStoreAsyncSendTests {
    @Test("await send suspends the test, so an effect's step on the main actor, which the test holds, runs before it returns")
    @MainActor
    func mainActorStep() async {
        let store = TestStore<Hop, HopAction>(initialState: Hop())
        await store.send(.start)
        // The synchronous send could not have let the effect reach the main actor: the test holds it.
        #expect(store.state.hopped)
        await store.receive(.hopped) { @Sendable (state: inout Hop) in state.hopped = true }
        await store.finish()
    }
}
