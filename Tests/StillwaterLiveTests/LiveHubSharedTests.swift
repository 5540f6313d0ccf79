import Synchronization
import Testing
@testable import StillwaterLive

@Suite("LiveHubShared")
struct LiveHubSharedTests {
    @Test("the writer's start runs at the same stack depth on every wake, however many came before")
    func startDepthStaysFlat() {
        // A closure kept directly as a lock's state is re-wrapped each time it is read through the lock;
        // every wake of the writer would then call through one more layer than the last, and a long-lived
        // hub would spend more time and memory on each wake until its stack ran out.
        let shared = LiveHubShared<BoardService>(service: BoardService(), version: 0, state: Board(), historyCapacity: 4)
        let depths = Mutex((lowest: UInt.max, highest: UInt.min, wakes: 0))
        shared.setStart {
            var local = 0
            let address = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
            depths.withLock { $0 = (min($0.lowest, address), max($0.highest, address), $0.wakes + 1) }
        }
        for head in 1...2_000 {
            shared.raiseTarget(to: head)                                   // wakes the writer: runs the start
            #expect(shared.takeWork(position: head - 1)?.target == head)   // the writer takes the work
            #expect(shared.takeWork(position: head) == nil)                // and stops: the next raise wakes it
        }
        let (lowest, highest, wakes) = depths.withLock { $0 }
        #expect(wakes == 2_000)
        #expect(highest - lowest < 4096)
    }
}
