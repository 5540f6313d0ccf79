import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Observable.timer and Observable.interval")
struct TimerTests {
    private let digits: [Character: Int] = ["0": 0, "1": 1, "2": 2, "3": 3]

    @Test("timer sends 0 once its due time has passed, then completes")
    func timer() {
        let scheduler = TestScheduler()
        let recorder = Recorder(Observable.timer(.milliseconds(3), scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        recorder.expect("---(0|)", values: digits)
    }

    @Test("timer counts from each subscription")
    func timerPerSubscription() {
        let scheduler = TestScheduler()
        let timer = Observable.timer(.milliseconds(2), scheduler: scheduler)
        scheduler.advance(to: .milliseconds(5))
        let recorder = Recorder(timer, scheduler: scheduler)
        scheduler.run()
        #expect(recorder.timeline == [.next(.milliseconds(7), 0), .completed(.milliseconds(7))])
    }

    @Test("a negative due time counts as zero")
    func negativeDueTime() {
        let scheduler = TestScheduler()
        let recorder = Recorder(Observable.timer(.seconds(-1), scheduler: scheduler), scheduler: scheduler)
        scheduler.advance()
        #expect(recorder.timeline == [.next(.zero, 0), .completed(.zero)])
    }

    @Test("timer with a period sends 0 at the due time, then 1, 2, … every period")
    func periodic() {
        let scheduler = TestScheduler()
        let recorder = Recorder(Observable.timer(.milliseconds(1), period: .milliseconds(2), scheduler: scheduler),
                                scheduler: scheduler)
        scheduler.advance(to: .milliseconds(6))
        recorder.expect("-0-1-2", values: digits)
    }

    @Test("interval sends 0, 1, 2, … every period, starting one period after subscribing")
    func interval() {
        let scheduler = TestScheduler()
        let recorder = Recorder(Observable.interval(.milliseconds(2), scheduler: scheduler).take(3), scheduler: scheduler)
        scheduler.run()
        recorder.expect("--0-1-(2|)", values: digits)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("cancelling an interval cancels and releases its repeating work")
    func cancelInterval() {
        let scheduler = TestScheduler()
        var token: Token? = Token()
        weak let weakToken = token
        let recorder = Recorder(Observable.interval(.seconds(1), scheduler: scheduler).map { [token] in $0 + token!.id },
                                scheduler: scheduler)
        token = nil
        scheduler.advance(to: .seconds(3))
        recorder.cancel()
        #expect(scheduler.pendingWorkCount == 0)
        #expect(weakToken == nil)
        scheduler.advance(to: .seconds(10))
        #expect(recorder.values == [0, 1, 2])
    }

    @Test("a period of zero stops the program with a message")
    func zeroPeriod() async {
        await #expect(processExitsWith: .failure) {
            _ = Observable.interval(.zero, scheduler: .immediate)
        }
        await #expect(processExitsWith: .failure) {
            _ = Observable.timer(.zero, period: .zero, scheduler: .immediate)
        }
    }
}
