import Dispatch
import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("ScheduledWork")
struct ScheduledWorkTests {
    @Test("one-shot work runs once, then counts as spent and releases its closure")
    func oneShot() {
        var token: Token? = Token()
        weak let weakToken = token
        let count = Shared(0)
        let work = ScheduledWork { [token] in
            _ = token
            count.value += 1
        }
        token = nil
        #expect(work.run())
        #expect(!work.run())
        #expect(count.value == 1)
        #expect(work.isCancelled)
        #expect(weakToken == nil)
    }

    @Test("repeating work runs every time until cancelled")
    func repeating() {
        let count = Shared(0)
        let work = ScheduledWork(repeats: true) { count.value += 1 }
        for _ in 1...3 { work.run() }
        work.cancel()
        #expect(!work.run())
        #expect(count.value == 3)
    }

    @Test("cancelling releases the closure at once and is safe to repeat")
    func cancelReleases() {
        var token: Token? = Token()
        weak let weakToken = token
        let work = ScheduledWork { [token] in _ = token }
        token = nil
        #expect(weakToken != nil && !work.isCancelled)
        work.cancel()
        work.cancel()
        #expect(weakToken == nil && work.isCancelled)
    }

    @Test("work may cancel itself while it runs")
    func cancelFromInside() {
        let holder = Shared<ScheduledWork?>(nil)
        let count = Shared(0)
        holder.value = ScheduledWork(repeats: true) {
            count.value += 1
            holder.value?.cancel()
        }
        holder.value?.run()
        holder.value?.run()
        #expect(count.value == 1)
    }
}

@Suite("ImmediateScheduler")
struct ImmediateSchedulerTests {
    @Test("schedule runs the work before returning")
    func runsAtOnce() {
        let ran = Shared(false)
        let work = ImmediateScheduler().schedule { ran.value = true }
        #expect(ran.value)
        #expect(work.isSpent)
    }

    @Test("schedule(after:) ignores the delay")
    func ignoresDelay() {
        let order = Shared<[Int]>([])
        ImmediateScheduler().schedule(after: .seconds(60)) { order.value.append(1) }
        order.value.append(2)
        #expect(order.value == [1, 2])
    }

    @Test("work scheduled from inside work runs nested, at once")
    func nested() {
        let order = Shared<[String]>([])
        let scheduler: ImmediateScheduler = .immediate
        scheduler.schedule {
            order.value.append("outer")
            scheduler.schedule { order.value.append("inner") }
            order.value.append("outer end")
        }
        #expect(order.value == ["outer", "inner", "outer end"])
    }

    @Test("its clock is the real one")
    func realClock() {
        let scheduler = ImmediateScheduler()
        let first = scheduler.now
        #expect(scheduler.now >= first)
        let other = DispatchQueueScheduler(.main).now
        #expect(other - scheduler.now < .seconds(1) && scheduler.now - other < .seconds(1))
    }

    @Test("repeating work stops the program with a message")
    func repeatingStops() async {
        await #expect(processExitsWith: .failure) {
            ImmediateScheduler().schedule(after: .zero, interval: .seconds(1)) {}
        }
    }
}

@Suite("DispatchQueueScheduler", .timeLimit(.minutes(5)))
struct DispatchQueueSchedulerTests {
    private static let key = DispatchSpecificKey<String>()

    private func labelledQueue(_ label: String, attributes: DispatchQueue.Attributes = []) -> DispatchQueue {
        let queue = DispatchQueue(label: label, attributes: attributes)
        queue.setSpecific(key: Self.key, value: label)
        return queue
    }

    @Test("work runs on the queue, in the order it was scheduled")
    func runsOnQueueInOrder() async {
        let scheduler: DispatchQueueScheduler = .queue(labelledQueue("serial"))
        let seen = await withCheckedContinuation { continuation in
            let log = Shared<[String]>([])
            for index in 0..<50 {
                scheduler.schedule {
                    log.value.append("\(index)@\(DispatchQueue.getSpecific(key: Self.key) ?? "elsewhere")")
                    if index == 49 { continuation.resume(returning: log.value) }
                }
            }
        }
        #expect(seen == (0..<50).map { "\($0)@serial" })
    }

    @Test("delayed work waits at least its delay")
    func waitsForDelay() async {
        let scheduler = DispatchQueueScheduler(labelledQueue("delayed"))
        let start = ContinuousClock.now
        let ranAt = await withCheckedContinuation { continuation in
            scheduler.schedule(after: .milliseconds(50)) { continuation.resume(returning: ContinuousClock.now) }
        }
        #expect(start.duration(to: ranAt) >= .milliseconds(49))
    }

    @Test("cancelling delayed or repeating work before its deadline releases it at once, it never runs, and cancelling again does nothing",
          arguments: [false, true])
    func cancelBeforeDeadline(repeats: Bool) async {
        let queue = labelledQueue("cancelled")
        let scheduler = DispatchQueueScheduler(queue)
        let ran = AtomicCounter()
        var token: Token? = Token()
        weak let weakToken = token
        let work = repeats
            ? scheduler.schedule(after: .milliseconds(30), interval: .milliseconds(5)) { [token] in _ = token; ran.increment() }
            : scheduler.schedule(after: .milliseconds(30)) { [token] in _ = token; ran.increment() }
        token = nil
        work.cancel()
        #expect(weakToken == nil)
        work.cancel()
        try? await Task.sleep(for: .milliseconds(80))
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(ran.value == 0)
    }

    @Test("repeating work runs every interval until cancelled, never twice at once")
    func repeating() async {
        let scheduler = DispatchQueueScheduler(labelledQueue("concurrent", attributes: .concurrent))
        let detector = OverlapDetector()
        let count = AtomicCounter()
        let (ticks, continuation) = AsyncStream<Void>.makeStream()
        let work = scheduler.schedule(after: .zero, interval: .milliseconds(5)) {
            detector.enter {
                count.increment()
                continuation.yield()
            }
        }
        var iterator = ticks.makeAsyncIterator()
        for _ in 0..<3 { await iterator.next() }
        work.cancel()
        let afterCancel = count.value
        try? await Task.sleep(for: .milliseconds(40))
        #expect(count.value <= afterCancel + 1)    // at most a run that had already started
        #expect(afterCancel >= 3)
        #expect(detector.overlaps == 0)
    }

    @Test("an interval of zero stops the program with a message")
    func zeroInterval() async {
        await #expect(processExitsWith: .failure) {
            DispatchQueueScheduler(.global()).schedule(after: .zero, interval: .zero) {}
        }
    }

    @Test("the real schedulers share one clock that moves forward")
    func sharedClock() async throws {
        let first = DispatchQueueScheduler(.global()).now
        try await Task.sleep(for: .milliseconds(10))
        let second = MainActorScheduler().now
        #expect(second - first >= .milliseconds(9))
    }

    @Test("durations convert to whole nanoseconds, negative ones to zero, huge ones clamped")
    func nanoseconds() {
        #expect(Duration.milliseconds(3).clampedNanoseconds == 3_000_000)
        #expect(Duration.nanoseconds(-5).clampedNanoseconds == 0)
        #expect(Duration.zero.clampedNanoseconds == 0)
        #expect(Duration.seconds(Int64.max).clampedNanoseconds == .max)
    }
}

@Suite("MainActorScheduler", .timeLimit(.minutes(5)))
struct MainActorSchedulerTests {
    private static let key = DispatchSpecificKey<String>()

    /// Whether the caller runs on the main queue, which is the main actor's executor. (On Linux, once the
    /// main thread has handed the main queue to dispatch, a worker thread may serve it, so
    /// `Thread.isMainThread` is not the test.)
    private static var onMainActor: Bool {
        DispatchQueue.main.setSpecific(key: key, value: "main")
        guard DispatchQueue.getSpecific(key: key) == "main" else { return false }
        MainActor.assumeIsolated {}     // stops the program if the runtime disagrees
        return true
    }

    @Test("work scheduled from another thread runs on the main actor, in order")
    func runsOnMain() async {
        let results = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let log = Shared<[(Int, Bool)]>([])
                for index in 0..<20 {
                    MainActorScheduler.main.schedule {
                        log.value.append((index, Self.onMainActor))
                        if index == 19 { continuation.resume(returning: log.value) }
                    }
                }
            }
        }
        #expect(results.map(\.0) == Array(0..<20))
        #expect(results.allSatisfy { $0.1 })
    }

    @Test("work scheduled from the main actor waits for the next turn instead of running nested")
    @MainActor
    func notNested() async {
        let order = Shared<[String]>([])
        await withCheckedContinuation { continuation in
            MainActorScheduler().schedule {
                order.value.append("work")
                continuation.resume()
            }
            order.value.append("caller")
        }
        #expect(order.value == ["caller", "work"])
    }

    @Test("delayed work runs on the main actor after its delay")
    func delayed() async {
        let start = ContinuousClock.now
        let (onMain, elapsed) = await withCheckedContinuation { continuation in
            MainActorScheduler().schedule(after: .milliseconds(20)) {
                continuation.resume(returning: (Self.onMainActor, start.duration(to: .now)))
            }
        }
        #expect(onMain)
        #expect(elapsed >= .milliseconds(19))
    }
}

extension Cancellable {
    /// Whether scheduled work is spent or cancelled (for the tests of this package's schedulers).
    var isSpent: Bool { (self as? ScheduledWork)?.isCancelled ?? false }
}
