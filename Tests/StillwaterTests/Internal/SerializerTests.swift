import Dispatch
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

/// The rules every operator on a `Serializer` relies on, checked on the serializer itself: its handler is
/// called in place (never copied), so these also guard that nothing lets go of it while it runs.
@Suite("Serializer")
struct SerializerTests {
    @Test("work submitted from inside the handler runs after the current item, in submission order")
    func reentrantSubmitIsQueued() {
        let seen = Shared<[String]>([])
        let serializer = Shared<Serializer<Int>?>(nil)
        serializer.value = Serializer { item in
            seen.value.append("start \(item)")
            if item == 1 {
                serializer.value?.submit(2)
                serializer.value?.submit(3)
            }
            seen.value.append("end \(item)")
            return true
        }
        serializer.value?.submit(1)
        #expect(seen.value == ["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"])
        serializer.value?.cancel()
    }

    @Test("a cancel from inside the handler drops the queued work and lets go of what the handler captured")
    func cancelInsideHandler() {
        var token: Token? = Token()
        weak let weakToken = token
        let calls = Shared<[Int]>([])
        let serializer = Shared<Serializer<Int>?>(nil)
        serializer.value = Serializer { [token] item in
            withExtendedLifetime(token) { calls.value.append(item) }
            if item == 1 {
                serializer.value?.submit(2)
                serializer.value?.cancel()
                // Still running: what the handler captured is alive until the call returns.
                #expect(weakToken != nil)
            }
            return true
        }
        token = nil
        serializer.value?.submit(1)
        serializer.value?.submit(4)
        #expect(calls.value == [1])
        #expect(weakToken == nil)
        #expect(serializer.value?.isOpen == false)
    }

    @Test("a handler that returns false closes the serializer: later work is ignored, its captures released")
    func handlerClosing() {
        var token: Token? = Token()
        weak let weakToken = token
        let calls = Shared<[Int]>([])
        let serializer = Serializer<Int> { [token] item in
            withExtendedLifetime(token) { calls.value.append(item) }
            return item != 2
        }
        token = nil
        for item in 1...4 { serializer.submit(item) }
        #expect(calls.value == [1, 2])
        #expect(weakToken == nil)
    }

    @Test("items submitted from many threads at once each run once, one at a time")
    func concurrentSubmits() {
        let overlap = OverlapDetector()
        let count = Shared(0)
        let serializer = Serializer<Int> { _ in
            overlap.enter { count.value += 1 }
            return true
        }
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for item in 0..<5_000 { serializer.submit(item) }
        }
        #expect(overlap.overlaps == 0)
        #expect(count.value == 40_000)
        serializer.cancel()
    }
}
