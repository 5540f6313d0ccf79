import Observation
import Testing
import StillwaterTesting
@testable import Stillwater

@Observable
final class Player: @unchecked Sendable {
    var score = 0
    var name = "Ada"
}

@Suite("Observation bridge")
struct ObservationBridgeTests {
    @Test("a property following an @Observable key path reads its value now and after each change")
    func followsChanges() async throws {
        let player = Player()
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
