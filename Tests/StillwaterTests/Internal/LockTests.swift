import Foundation
import Testing
@testable import Stillwater

/// The package's one lock under contention: what it guards is touched by one thread at a time, and each
/// holder's section is ordered after the one before it where the thread sanitizer can see it.
@Suite("Lock")
struct LockTests {
    final class Counter: Sendable {
        let count = Lock(0)
        let pairs = Lock([Int]())
    }

    @Test("eight threads taking one lock 20 000 times each lose no increment; under the thread sanitizer, no race is reported")
    func contendedSections() {
        // On Linux a contended Mutex is handed over inside the kernel, where the sanitizer cannot see it:
        // without the lock's own acquiring load and releasing store, `swift test --sanitize=thread`
        // reports these sections as data races (a plain Mutex here does; see the engine article).
        let counter = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for step in 0..<20_000 {
                counter.count.withLock { $0 += 1 }
                if step % 1_000 == 0 { counter.pairs.withLock { $0.append(thread) } }
            }
        }
        #expect(counter.count.withLock { $0 } == 160_000)
        #expect(counter.pairs.withLock { $0.count } == 160)
    }

    @Test("the holder is cleared when the section ends, so the next section on the same thread does not stop")
    func holderCleared() {
        let counter = Counter()
        for _ in 0..<3 { counter.count.withLock { $0 += 1 } }
        #expect(counter.count.holder.load(ordering: .relaxed) == 0)
        #expect(counter.count.withLock { $0 } == 3)
    }
}
