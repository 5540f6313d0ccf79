import Testing
@testable import Stillwater
import StillwaterTesting

/// `for await` over the subjects themselves: the loop ends when the subject completes, throws when it
/// fails, and cancelling the task cancels the subscription.
@Suite("values of subjects", .timeLimit(.minutes(5)))
struct SubjectValuesTests {
    @Test("for try await over a subject ends when the subject completes")
    func endsOnCompletion() async throws {
        let subject = BehaviorSubject(0)
        var collected: [Int] = []
        for try await value in subject.values {
            collected.append(value)
            if value < 3 { subject.send(value + 1) } else { subject.complete() }
        }
        #expect(collected == [0, 1, 2, 3])
    }

    @Test("for try await over a subject throws when the subject fails, after its values")
    func throwsOnFailure() async {
        let subject = ReplaySubject<Int>(bufferSize: 2)
        subject.send(1)
        subject.send(2)
        var collected: [Int] = []
        await #expect(throws: TestError(code: 6)) {
            for try await value in subject.values {
                collected.append(value)
                if value == 2 { subject.fail(TestError(code: 6)) }
            }
        }
        #expect(collected == [1, 2])
    }

    @Test("a loop over an already completed subject ends at once")
    func completedSubject() async throws {
        let subject = PublishSubject<Int>()
        subject.complete()
        var count = 0
        for try await _ in subject.values { count += 1 }
        #expect(count == 0)
    }

    @Test("cancelling the task detaches the loop's observer from the subject")
    func cancellationDetaches() async throws {
        let subject = BehaviorSubject(0)
        let (started, continuation) = AsyncStream<Void>.makeStream()
        let loop = Task {
            var collected: [Int] = []
            for try await value in subject.values {
                collected.append(value)
                continuation.yield()
            }
            return collected
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        #expect(subject.core.observerCount == 1)
        loop.cancel()
        let collected = try await loop.value
        #expect(collected == [0])
        #expect(subject.core.observerCount == 0)
    }

    @Test("values sent while the loop body runs wait in the buffer, in order, by default")
    func bufferKeepsEverything() async throws {
        let subject = BehaviorSubject(0)
        var collected: [Int] = []
        for try await value in subject.values {
            collected.append(value)
            if value == 0 { for next in 1...50 { subject.send(next) } }
            if value == 50 { break }
        }
        #expect(collected == Array(0...50))
    }

    @Test("with newest(1), only the newest value sent while the body runs is kept")
    func bufferNewest() async throws {
        let subject = BehaviorSubject(0)
        var collected: [Int] = []
        for try await value in subject.values(buffering: .newest(1)) {
            collected.append(value)
            if value == 0 { for next in 1...50 { subject.send(next) } }
            if value == 50 { break }
        }
        #expect(collected == [0, 50])
    }
}
