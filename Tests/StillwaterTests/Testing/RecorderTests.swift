import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Recorder")
struct RecorderTests {
    @Test("a recorder without a scheduler records events, values, completion and error as before")
    func plainRecorder() {
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject)
        subject.send(1)
        subject.send(2)
        subject.fail(TestError(code: 5))
        #expect(recorder.events == [.next(1), .next(2), .error(TestError(code: 5))])
        #expect(recorder.values == [1, 2])
        #expect(!recorder.isCompleted)
        #expect(recorder.error as? TestError == TestError(code: 5))
        #expect(recorder.timeline.allSatisfy { $0.time == .zero })
    }

    @Test("a recorder with a scheduler records the virtual time of each event")
    func timedRecorder() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<String>()
        let recorder = Recorder(subject, scheduler: scheduler)
        subject.send("a")
        scheduler.advance(to: .seconds(3))
        subject.send("b")
        subject.complete()
        #expect(recorder.timeline == [.next(.zero, "a"), .next(.seconds(3), "b"), .completed(.seconds(3))])
        #expect(recorder.isCompleted)
    }

    @Test("cancel stops recording")
    func cancel() {
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject)
        subject.send(1)
        recorder.cancel()
        subject.send(2)
        #expect(recorder.values == [1])
    }

    @Test("releasing a recorder cancels its subscription and frees what the chain captured")
    func release() {
        let subject = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        var recorder: Recorder<Int>? = Recorder(subject.map { [token] in $0 + token!.id })
        token = nil
        subject.send(1)
        #expect(weakToken != nil)
        recorder = nil
        #expect(weakToken == nil)
        withExtendedLifetime(recorder) {}
    }

    @Test("a recorded entry describes its event and time")
    func describesEntries() {
        #expect(Recorded<Int>.next(.milliseconds(300), 1).description == "next(1) at 300 ms")
        #expect(Recorded<Int>.completed(.microseconds(1500)).description == "completed at 1.5 ms")
        #expect(Recorded<Int>.completed(.nanoseconds(40)).description == "completed at 40 ns")
    }
}
