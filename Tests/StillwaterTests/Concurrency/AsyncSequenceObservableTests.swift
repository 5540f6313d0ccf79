import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Observable.from(AsyncSequence)", .timeLimit(.minutes(5)))
struct AsyncSequenceObservableTests {
    /// Waits until `recorder` has a terminal event.
    private func ended<Value>(_ recorder: Recorder<Value>) async {
        while !recorder.events.contains(where: \.isTerminal) { await Task.yield() }
    }

    @Test("the stream sends the sequence's elements, then completes")
    func elementsThenCompletion() async {
        let (numbers, continuation) = AsyncStream<Int>.makeStream()
        let recorder = Recorder(Observable.from(numbers))
        for value in 1...3 { continuation.yield(value) }
        continuation.finish()
        await ended(recorder)
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test("the stream fails with the sequence's error")
    func failure() async {
        let (numbers, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        let recorder = Recorder(Observable.from(numbers))
        continuation.yield(1)
        continuation.finish(throwing: TestError(code: 9))
        await ended(recorder)
        #expect(recorder.events == [.next(1), .error(TestError(code: 9))])
    }

    @Test("each subscription iterates a sequence of its own")
    func eachSubscription() async {
        let numbers = [1, 2, 3].async
        let first = Recorder(Observable.from(numbers))
        let second = Recorder(Observable.from(numbers).map { $0 * 10 })
        await ended(first)
        await ended(second)
        #expect(first.values == [1, 2, 3])
        #expect(second.values == [10, 20, 30])
    }

    @Test("cancelling the subscription cancels the task iterating the sequence")
    func cancelCancelsTask() async {
        let (numbers, continuation) = AsyncStream<Int>.makeStream()
        let (terminated, terminatedContinuation) = AsyncStream<Bool>.makeStream()
        continuation.onTermination = { reason in
            if case .cancelled = reason { terminatedContinuation.yield(true) } else { terminatedContinuation.yield(false) }
        }
        let recorder = Recorder(Observable.from(numbers))
        continuation.yield(1)
        while recorder.values.isEmpty { await Task.yield() }
        recorder.cancel()
        var iterator = terminated.makeAsyncIterator()
        #expect(await iterator.next() == true)
        continuation.yield(2)
        await Task.yield()
        #expect(recorder.events == [.next(1)])
    }

    @Test("nothing arrives after cancelling, even from a sequence that ignores cancellation")
    func ignoresStubbornSequence() async throws {
        let gate = AsyncGate()
        let recorder = Recorder(Observable.from(StubbornSequence(gate: gate)))
        while recorder.values.isEmpty { await Task.yield() }
        recorder.cancel()
        await gate.open()
        try await Task.sleep(for: .milliseconds(20))
        #expect(recorder.events == [.next(0)])
    }
}

/// An async sequence over an array, for tests.
struct AsyncArray<Element: Sendable>: AsyncSequence, Sendable {
    let elements: [Element]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<Element>
        mutating func next() async -> Element? { remaining.popFirst() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(remaining: elements[...]) }
}

extension Array where Element: Sendable {
    var async: AsyncArray<Element> { AsyncArray(elements: self) }
}

/// A one-way gate tasks can wait at.
actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}

/// Sends 0, waits at the gate without checking for cancellation, then sends 1 and 2.
struct StubbornSequence: AsyncSequence, Sendable {
    let gate: AsyncGate

    struct AsyncIterator: AsyncIteratorProtocol {
        let gate: AsyncGate
        var next = 0
        mutating func next() async -> Int? {
            if next == 1 { await gate.wait() }
            guard next < 3 else { return nil }
            defer { next += 1 }
            return next
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(gate: gate) }
}
