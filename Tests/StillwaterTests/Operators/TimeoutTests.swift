import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("timeout")
struct TimeoutTests {
    @Test("timeout fails when the interval passes without a value (documented)")
    func documentedDiagram() {
        let scheduler = TestScheduler()
        let source = scheduler.hot("-a-b------c|", values: ["a": 1, "b": 2, "c": 3])
        let recorder = Recorder(source.timeout(.milliseconds(3), scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        recorder.expect("-a-b--#", values: ["a": 1, "b": 2], error: TimeoutError(interval: .milliseconds(3)))
    }

    @Test("timeout counts from the subscription when no value comes")
    func noValues() {
        let scheduler = TestScheduler()
        let recorder = Recorder(Observable<Int>.never().timeout(.seconds(2), scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.timeline == [.error(.seconds(2), TimeoutError(interval: .seconds(2)))])
    }

    @Test("timeout passes values, completion and errors that come in time, and stops its clock")
    func inTime() {
        expectMarbles("-a-b|", { $0.timeout(.milliseconds(3), scheduler: $1) }, "-a-b|")
        expectMarbles("-a#", { $0.timeout(.milliseconds(3), scheduler: $1) }, "-a#")
    }

    @Test("timeout cancels its subscription to the source when it fires")
    func cancelsSource() {
        let scheduler = TestScheduler()
        let source = scheduler.cold("-a-------b|", values: ["a": 1, "b": 2])
        let recorder = Recorder(source.timeout(.milliseconds(3), scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(source.subscriptions == [.init(subscribed: .zero, cancelled: .milliseconds(4))])
        #expect(recorder.values == [1])
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("every value restarts the clock")
    func restartsOnEveryValue() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.timeout(.seconds(1), scheduler: scheduler), scheduler: scheduler)
        for value in 1...5 {
            scheduler.advance(by: .milliseconds(900))
            subject.send(value)
        }
        scheduler.advance(by: .milliseconds(999))
        #expect(recorder.error == nil)
        scheduler.advance(by: .milliseconds(1))
        #expect(recorder.error as? TimeoutError == TimeoutError(interval: .seconds(1)))
        #expect(recorder.values == [1, 2, 3, 4, 5])
    }

    @Test("timeout on the immediate scheduler fails at once, without subscribing to the source")
    func immediate() {
        let subscribed = Shared(false)
        let source = Observable<Int> { observer in
            subscribed.value = true
            observer(.next(1))
            return .empty
        }
        let recorder = Recorder(source.timeout(.seconds(5), scheduler: .immediate))
        #expect(recorder.events == [.error(TimeoutError(interval: .seconds(5)))])
        #expect(!subscribed.value)
    }

    @Test("a stale timer run does not count")
    func stateMachine() {
        var machine = TimeoutState()
        let first = machine.restart()
        let second = machine.restart()
        #expect(!machine.isCurrent(first))
        #expect(machine.isCurrent(second))
    }

    @Test("TimeoutError says how long the wait was")
    func errorDescription() {
        #expect(TimeoutError(interval: .seconds(5)).description == "timed out after 5.0 seconds")
    }
}
