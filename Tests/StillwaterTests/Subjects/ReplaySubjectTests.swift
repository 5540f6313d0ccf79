import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("ReplaySubject")
struct ReplaySubjectTests {
    @Test("a new observer receives the last bufferSize values first",
          arguments: [(0, [Int]()), (1, [3]), (2, [2, 3]), (5, [1, 2, 3]), (Int.max, [1, 2, 3])])
    func replaysBuffer(bufferSize: Int, expected: [Int]) {
        let subject = ReplaySubject<Int>(bufferSize: bufferSize)
        for value in 1...3 { subject.send(value) }
        let recorder = Recorder(subject)
        subject.send(4)
        #expect(recorder.values == expected + [4])
    }

    @Test("after complete a new subscriber receives the buffer, then completed; later sends are ignored")
    func afterComplete() {
        let subject = ReplaySubject<Int>(bufferSize: 2)
        for value in 1...3 { subject.send(value) }
        subject.complete()
        subject.send(4)
        let recorder = Recorder(subject)
        #expect(recorder.events == [.next(2), .next(3), .completed])
    }

    @Test("after fail a new subscriber receives the buffer, then the error")
    func afterFail() {
        let subject = ReplaySubject<Int>(bufferSize: 1)
        subject.send(1)
        subject.fail(TestError(code: 6))
        subject.send(2)
        let recorder = Recorder(subject)
        #expect(recorder.events == [.next(1), .error(TestError(code: 6))])
    }

    @Test("a zero-size buffer still replays the terminal event")
    func zeroBufferReplaysTerminal() {
        let subject = ReplaySubject<Int>(bufferSize: 0)
        subject.send(1)
        subject.complete()
        #expect(Recorder(subject).events == [.completed])
    }

    @Test("completion releases what the observers captured")
    func completionReleases() {
        let subject = ReplaySubject<Int>(bufferSize: 2)
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = subject.observe { [token] _ in _ = token }
        token = nil
        #expect(weakToken != nil)
        subject.complete()
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }

    @Test("a negative bufferSize stops the process with a message naming the argument")
    func negativeBufferSize() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ReplaySubject<Int>(bufferSize: -1)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("bufferSize"), "message: \(message)")
        #endif
    }
}
