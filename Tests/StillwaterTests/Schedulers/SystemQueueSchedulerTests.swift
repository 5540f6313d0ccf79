import Dispatch
import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("DispatchQueue and OperationQueue as schedulers", .timeLimit(.minutes(5)))
struct SystemQueueSchedulerTests {
    private static let key = DispatchSpecificKey<String>()

    @Test("debounce(for:scheduler: queue) delivers the last value once, on that queue")
    func debounceOnQueue() async {
        let queue = DispatchQueue(label: "search")
        queue.setSpecific(key: Self.key, value: "search")
        let query = PublishSubject<String>()
        let (deliveries, delivered) = AsyncStream<String>.makeStream()
        let subscription = query
            .debounce(for: .milliseconds(20), scheduler: queue)
            .observe { delivered.yield("\($0)@\(DispatchQueue.getSpecific(key: Self.key) ?? "elsewhere")") }
        query.send("s")
        query.send("swift")
        var iterator = deliveries.makeAsyncIterator()
        let seen = await iterator.next()
        withExtendedLifetime(subscription) {}
        #expect(seen == "swift@search")
    }

    @Test("DispatchQueue.main is the same as .main: the work runs on the main actor")
    func mainQueueIsMain() async {
        let onMain = await withCheckedContinuation { continuation in
            (DispatchQueue.main as any Scheduler).schedule {
                continuation.resume(returning: MainActor.assumeIsolated { true })
            }
        }
        #expect(onMain)
        // One clock: a reading of the queue's falls between two of the main actor scheduler's.
        let before = MainActorScheduler().now
        let queueNow = DispatchQueue.main.now
        let after = MainActorScheduler().now
        #expect(before <= queueNow && queueNow <= after)
    }

    @Test("cancelled queue work never runs and releases its closure at once", arguments: [false, true])
    func dispatchCancel(repeats: Bool) async throws {
        let queue = DispatchQueue(label: "cancelled")
        let ran = AtomicCounter()
        var token: Token? = Token()
        weak let weakToken = token
        let work = repeats
            ? queue.schedule(after: .milliseconds(20), interval: .milliseconds(5)) { [token] in _ = token; ran.increment() }
            : queue.schedule(after: .milliseconds(20)) { [token] in _ = token; ran.increment() }
        token = nil
        work.cancel()
        #expect(weakToken == nil)
        try await Task.sleep(for: .milliseconds(60))
        #expect(ran.value == 0)
    }

    @Test("an operation queue runs work in order, delayed work after its delay, repeating work until cancelled")
    func operationQueue() async throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let log = Lock<[Int]>([])
        for index in 0..<20 { queue.schedule { log.withLock { $0.append(index) } } }
        while log.withLock({ $0.count }) < 20 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(log.withLock { $0 } == Array(0..<20))

        let start = ContinuousClock.now
        let ranAt = await withCheckedContinuation { continuation in
            queue.schedule(after: .milliseconds(30)) { continuation.resume(returning: ContinuousClock.now) }
        }
        #expect(start.duration(to: ranAt) >= .milliseconds(29))

        let ticks = AtomicCounter()
        let repeating = queue.schedule(after: .zero, interval: .milliseconds(5)) { ticks.increment() }
        while ticks.value < 3 { try await Task.sleep(for: .milliseconds(5)) }
        repeating.cancel()
        // A tick already added as an operation may still run: wait for the operations added so far (the
        // queue runs one at a time, in order).
        await withCheckedContinuation { continuation in queue.addOperation { continuation.resume() } }
        let stopped = ticks.value
        try await Task.sleep(for: .milliseconds(30))
        #expect(ticks.value == stopped)
    }

    @Test("cancelled operation-queue work never runs")
    func operationCancel() async throws {
        let queue = OperationQueue()
        let ran = AtomicCounter()
        queue.schedule(after: .milliseconds(20)) { ran.increment() }.cancel()
        try await Task.sleep(for: .milliseconds(60))
        #expect(ran.value == 0)
    }
}
