import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("TestScheduler")
struct TestSchedulerTests {
    @Test("the clock starts at zero and moves only when advanced")
    func clock() {
        let scheduler = TestScheduler()
        #expect(scheduler.now == .zero)
        scheduler.advance(by: .seconds(2))
        #expect(scheduler.now == .seconds(2))
        scheduler.advance(to: .seconds(5))
        #expect(scheduler.now == .seconds(5))
        scheduler.advance()
        #expect(scheduler.now == .seconds(5))
    }

    @Test("work runs when the clock reaches its time, with now reading that time")
    func runsAtItsTime() {
        let scheduler = TestScheduler()
        let seen = Shared<[Duration]>([])
        scheduler.schedule(after: .milliseconds(300)) { seen.value.append(scheduler.now) }
        scheduler.advance(by: .milliseconds(299))
        #expect(seen.value.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        #expect(seen.value == [.milliseconds(300)])
    }

    @Test("advance(to:) runs the work in time order, and same-time work in scheduling order")
    func order() {
        let scheduler = TestScheduler()
        let order = Shared<[String]>([])
        scheduler.schedule(after: .seconds(2)) { order.value.append("2a") }
        scheduler.schedule(after: .seconds(1)) { order.value.append("1") }
        scheduler.schedule(after: .seconds(2)) { order.value.append("2b") }
        scheduler.schedule { order.value.append("now") }
        scheduler.advance(to: .seconds(3))
        #expect(order.value == ["now", "1", "2a", "2b"])
        #expect(scheduler.now == .seconds(3))
    }

    @Test("work scheduled now runs at the next advance, even advance(by: .zero)")
    func scheduleNow() {
        let scheduler = TestScheduler()
        let ran = Shared(false)
        scheduler.schedule { ran.value = true }
        #expect(!ran.value)
        scheduler.advance()
        #expect(ran.value)
    }

    @Test("work scheduled by running work for a time inside the advance runs in the same advance")
    func scheduledFromWork() {
        let scheduler = TestScheduler()
        let times = Shared<[Duration]>([])
        scheduler.schedule(after: .seconds(1)) {
            times.value.append(scheduler.now)
            scheduler.schedule { times.value.append(scheduler.now) }
            scheduler.schedule(after: .seconds(1)) { times.value.append(scheduler.now) }
            scheduler.schedule(after: .seconds(5)) { times.value.append(scheduler.now) }
        }
        scheduler.advance(to: .seconds(2))
        #expect(times.value == [.seconds(1), .seconds(1), .seconds(2)])
        #expect(scheduler.pendingWorkCount == 1)
    }

    @Test("a negative delay counts as zero")
    func negativeDelay() {
        let scheduler = TestScheduler()
        scheduler.advance(to: .seconds(1))
        let seen = Shared<Duration?>(nil)
        scheduler.schedule(after: .seconds(-5)) { seen.value = scheduler.now }
        scheduler.advance()
        #expect(seen.value == .seconds(1))
    }

    @Test("run() runs everything, moving the clock to the last piece of work")
    func runUntilIdle() {
        let scheduler = TestScheduler()
        let count = Shared(0)
        for second in 1...5 { scheduler.schedule(after: .seconds(second)) { count.value += 1 } }
        scheduler.run()
        #expect(count.value == 5)
        #expect(scheduler.now == .seconds(5))
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("repeating work runs at its delay, then every interval, until cancelled")
    func repeating() {
        let scheduler = TestScheduler()
        let times = Shared<[Duration]>([])
        let work = scheduler.schedule(after: .seconds(2), interval: .seconds(1)) { times.value.append(scheduler.now) }
        scheduler.advance(to: .seconds(4))
        #expect(times.value == [.seconds(2), .seconds(3), .seconds(4)])
        work.cancel()
        scheduler.advance(to: .seconds(10))
        #expect(times.value.count == 3)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("repeating work can cancel itself from inside")
    func repeatingCancelsItself() {
        let scheduler = TestScheduler()
        let count = Shared(0)
        let holder = Shared<(any Cancellable)?>(nil)
        holder.value = scheduler.schedule(after: .zero, interval: .seconds(1)) {
            count.value += 1
            if count.value == 3 { holder.value?.cancel() }
        }
        scheduler.run()
        #expect(count.value == 3)
        #expect(scheduler.now == .seconds(2))
    }

    @Test("cancelled work never runs, is not pending, and its closure is released at once")
    func cancelReleases() {
        let scheduler = TestScheduler()
        var token: Token? = Token()
        weak let weakToken = token
        let ran = Shared(false)
        let work = scheduler.schedule(after: .seconds(1)) { [token] in
            _ = token
            ran.value = true
        }
        token = nil
        #expect(weakToken != nil)
        #expect(scheduler.pendingWorkCount == 1)
        work.cancel()
        #expect(weakToken == nil)
        #expect(scheduler.pendingWorkCount == 0)
        scheduler.run()
        #expect(!ran.value)
    }

    @Test("dropping the returned cancellable leaves the work scheduled")
    func droppedCancellableStillRuns() {
        let scheduler = TestScheduler()
        let ran = Shared(false)
        scheduler.schedule(after: .seconds(1)) { ran.value = true }
        scheduler.run()
        #expect(ran.value)
    }

    @Test("advancing backwards stops the program with a message")
    func backwards() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.advance(to: .seconds(2))
            scheduler.advance(to: .seconds(1))
        }
    }

    @Test("advancing from inside running work stops the program with a message")
    func nestedAdvance() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.schedule { scheduler.advance(by: .seconds(1)) }
            scheduler.advance()
        }
    }

    @Test("run() stops the program when work never ends")
    func runLimit() async {
        await #expect(processExitsWith: .failure) {
            let scheduler = TestScheduler()
            scheduler.schedule(after: .zero, interval: .seconds(1)) {}
            scheduler.run()
        }
    }

    @Test("a frame of zero stops the program with a message")
    func zeroFrame() async {
        await #expect(processExitsWith: .failure) {
            _ = TestScheduler(frame: .zero)
        }
    }
}
