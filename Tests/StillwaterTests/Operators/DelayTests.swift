import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("delay")
struct DelayTests {
    @Test("delay shifts every value and the completion by the delay (documented)")
    func documentedDiagram() {
        expectMarbles("-a-b|", { $0.delay(for: .milliseconds(2), scheduler: $1) }, "---a-b|")
    }

    @Test("delay keeps the spacing of values, and values of one frame together")
    func keepsSpacing() {
        expectMarbles("-ab--c|", { $0.delay(for: .milliseconds(3), scheduler: $1) }, "----ab--c|")
        expectMarbles("-(ab)-c|", { $0.delay(for: .milliseconds(2), scheduler: $1) }, "---(ab)-c|")
    }

    @Test("delay sends an error at once and drops the values still waiting")
    func errorAtOnce() {
        expectMarbles("-a-b#", { $0.delay(for: .milliseconds(2), scheduler: $1) }, "---a#")
    }

    @Test("delay of zero sends each event on the scheduler at the same virtual time")
    func zeroDelay() {
        expectMarbles("-a-b|", { $0.delay(for: .zero, scheduler: $1) }, "-a-b|")
    }

    @Test("delay of an empty source delays its completion")
    func empty() {
        expectMarbles("-|", { $0.delay(for: .milliseconds(3), scheduler: $1) }, "----|")
    }

    @Test("delay on the immediate scheduler passes events through at once, in order")
    func immediate() {
        #expect(events(of: { $0.delay(for: .seconds(5), scheduler: .immediate) }, sending: [1, 2])
                == [.next(1), .next(2), .completed])
    }

    @Test("delay keeps one timer at a time, however many events wait")
    func oneTimer() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.delay(for: .seconds(1), scheduler: scheduler), scheduler: scheduler)
        for value in 1...10 {
            subject.send(value)
            scheduler.advance(by: .milliseconds(10))
        }
        #expect(scheduler.pendingWorkCount == 1)
        scheduler.run()
        #expect(recorder.values == Array(1...10))
        #expect(recorder.timeline.map(\.time) == (0..<10).map { .seconds(1) + .milliseconds(10 * $0) })
    }

    @Test("the delay state machine sends the fired event and every other due one, then waits for the next")
    func stateMachine() {
        var machine = DelayState<Int>(delay: .seconds(1))
        #expect(machine.receive(.next(1), at: .zero) == .seconds(1))
        #expect(machine.receive(.next(2), at: .zero) == nil)
        #expect(machine.receive(.next(3), at: .milliseconds(500)) == nil)
        let (due, wait) = machine.fire(at: .seconds(1))
        #expect(due.map(\.value) == [1, 2])
        #expect(wait == .milliseconds(500))
        let (last, none) = machine.fire(at: .milliseconds(1_500))
        #expect(last.map(\.value) == [3] && none == nil)
    }

    @Test("a steady stream faster than the delay keeps only about twice the events in flight")
    func steadyStreamBoundsStorage() {
        // One event every 10 ms, delayed by 100 ms: about 10 are in flight at any time, and the timer
        // never goes idle, so sent events must be dropped from storage as it runs.
        var machine = DelayState<Int>(delay: .milliseconds(100))
        var now = Duration.zero
        var nextFire: Duration? = machine.receive(.next(0), at: now).map { now + $0 }
        var sent = 0
        var largest = 0
        for value in 1..<10_000 {
            now += .milliseconds(10)
            if let fire = nextFire, fire <= now {
                let (due, wait) = machine.fire(at: fire)
                sent += due.count
                nextFire = wait.map { fire + $0 }
            }
            if let wait = machine.receive(.next(value), at: now) { nextFire = now + wait }
            largest = max(largest, machine.storedCount)
        }
        #expect(sent > 9_000)
        #expect(largest <= 30)
    }
}
