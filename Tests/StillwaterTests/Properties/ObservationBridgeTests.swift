import Observation
import Synchronization
import Testing
import StillwaterTesting
@testable import Stillwater

@Observable
final class Player: @unchecked Sendable {
    var score = 0
    var name = "Ada"
}

/// The object of the `Property(observing:_:)` doc example, as written there: a checked `Sendable`
/// `@Observable` class whose state is behind a `Mutex`.
@Observable final class GuardedPlayer: Sendable {
    @ObservationIgnored private let storage = Mutex(0)
    var score: Int {
        get { access(keyPath: \.score); return storage.withLock { $0 } }
        set { withMutation(keyPath: \.score) { storage.withLock { $0 = newValue } } }
    }
}

@Suite("Observation bridge")
struct ObservationBridgeTests {
    /// Uses the doc example's object, so the example is known to compile in Swift 6 mode and to work.
    @Test("a property following an @Observable key path reads its value now and after each change")
    func followsChanges() async throws {
        let player = GuardedPlayer()
        let score = Property(observing: player, \.score)
        #expect(score.value == 0)
        var iterator = score.values.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        player.score = 10
        #expect(await iterator.next() == 10)
        player.score = 11
        #expect(await iterator.next() == 11)
        #expect(score.value == 11)
    }

    @Test("a change of another key path is not reported")
    func ignoresOtherKeyPaths() async throws {
        let player = Player()
        let score = Property(observing: player, \.score)
        var iterator = score.values.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        player.name = "Grace"
        player.score = 3
        #expect(await iterator.next() == 3)
    }
}
