import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("buffer(count:)")
struct BufferCountTests {
    @Test("buffer(count:) sends arrays of count, and the shorter rest on completion", arguments: [1, 2, 3, 4])
    func arrays(count: Int) {
        let input = Array(1...7)
        let expected = stride(from: 0, to: input.count, by: count).map { Array(input[$0..<min($0 + count, input.count)]) }
        #expect(events(of: { $0.buffer(count: count) }, sending: input) == expected.map(Event.next) + [.completed])
    }

    @Test("buffer(count:) sends no empty array on completion")
    func noEmptyRest() {
        #expect(events(of: { $0.buffer(count: 2) }, sending: [1, 2]) == [.next([1, 2]), .completed])
        expectCompletesWhenEmpty { $0.buffer(count: 2) }
    }

    @Test("buffer(count:) passes the error on and drops the values not yet sent")
    func error() { expectForwardsError({ $0.buffer(count: 2) }, sending: [1, 2, 3], expecting: [[1, 2]]) }

    @Test("buffer(count:) stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.buffer(count: 1) } }

    @Test("buffer(count:) releases what the chain captured", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.buffer(count: 5) }
    }

    @Test("buffer(count:) delivers an array caused from inside its observer after the current one")
    func reentrant() {
        expectQueuesReentrantSends({ $0.buffer(count: 1) }, sending: 1, expecting: (1...8).map { [$0] })
    }

    @Test("buffer(count:) with a count of zero stops the process with a message naming the argument")
    func zeroCount() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PublishSubject<Int>().buffer(count: 0)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("buffer(count:)") && message.contains("count"), "message: \(message)")
        #endif
    }

    @Test("buffer(count:) of a relay stays infallible")
    func infallible() {
        let relay = PublishRelay<Int>()
        let result: Infallible<[Int]> = relay.buffer(count: 2)
        let recorder = Recorder(result)
        relay.accept(1)
        relay.accept(2)
        #expect(recorder.values == [[1, 2]])
    }
}

@Suite("buffer(timeSpan:count:scheduler:)")
struct BufferTimeTests {
    /// What `buffer(timeSpan: 3 s, count:)` sends for `input` (time in seconds, value), with the source
    /// completing at `end` seconds, as (time in seconds, array).
    func timeline(_ input: [(Int, Int)], count: Int, end: Int?) -> [(Int, [Int])] {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        for (time, value) in input {
            scheduler.schedule(after: .seconds(time)) { subject.send(value) }
        }
        if let end { scheduler.schedule(after: .seconds(end)) { subject.complete() } }
        let recorder = Recorder(subject.buffer(timeSpan: .seconds(3), count: count, scheduler: scheduler),
                                scheduler: scheduler)
        scheduler.advance(to: .seconds(10))
        recorder.cancel()
        return recorder.timeline.compactMap { record in
            guard case .next(let values) = record.event else { return nil }
            return (Int(record.time.components.seconds), values)
        }
    }

    @Test("buffer(timeSpan:count:scheduler:) sends what a timeSpan collected, empty when nothing came")
    func byTime() {
        let sent = timeline([(1, 1), (2, 2), (4, 3)], count: 10, end: nil)
        #expect(sent.map(\.0) == [3, 6, 9])
        #expect(sent.map(\.1) == [[1, 2], [3], []])
    }

    @Test("buffer(timeSpan:count:scheduler:) sends a full array at once, and starts a new timeSpan")
    func byCount() {
        let sent = timeline([(1, 1), (2, 2), (4, 3), (5, 4)], count: 2, end: nil)
        // [1, 2] is full at 2 s; the next span runs 2 s to 5 s, where [3, 4] fills; then 5 s to 8 s.
        #expect(sent.map(\.0) == [2, 5, 8])
        #expect(sent.map(\.1) == [[1, 2], [3, 4], []])
    }

    @Test("buffer(timeSpan:count:scheduler:) sends the rest, if any, then completes")
    func completion() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.buffer(timeSpan: .seconds(3), count: 5, scheduler: scheduler), scheduler: scheduler)
        subject.send(1)
        subject.complete()
        scheduler.advance()                       // every event is sent from the scheduler
        #expect(recorder.events == [.next([1]), .completed])
        #expect(scheduler.pendingWorkCount == 0)

        let empty = Recorder(Observable<Int>.empty().buffer(timeSpan: .seconds(3), count: 5, scheduler: scheduler))
        scheduler.advance()
        #expect(empty.events == [.completed])
    }

    @Test("buffer(timeSpan:count:scheduler:) passes the error on and drops the rest")
    func error() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.buffer(timeSpan: .seconds(3), count: 5, scheduler: scheduler))
        subject.send(1)
        subject.fail(TestError())
        scheduler.advance()                       // every event is sent from the scheduler
        #expect(recorder.events == [.error(TestError())])
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("buffer(timeSpan:count:scheduler:) stops, and cancels its timer, when cancelled")
    func cancel() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.buffer(timeSpan: .seconds(3), count: 5, scheduler: scheduler))
        subject.send(1)
        recorder.cancel()
        scheduler.advance(by: .seconds(10))
        subject.send(2)
        #expect(recorder.events.isEmpty)
        #expect(scheduler.pendingWorkCount == 0)
        // Cancelled mid-stream (arrays are sent from the scheduler, so the clock moves before the cancel).
        let source = PublishSubject<Int>()
        let count = Shared(0)
        let running = source.buffer(timeSpan: .seconds(3), count: 1, scheduler: scheduler).subscribe { _ in count.value += 1 }
        source.send(1)
        source.send(2)
        scheduler.advance()
        let before = count.value
        #expect(before == 2)
        source.send(3)
        running.cancel()
        source.send(4)
        source.complete()
        scheduler.advance(by: .seconds(10))
        #expect(count.value == before, "nothing may arrive after cancel()")
    }

    @Test("buffer(timeSpan:count:scheduler:) releases what the chain captured", arguments: Ending.allCases)
    func releases(ending: Ending) {
        let scheduler = TestScheduler()
        expectReleasesCaptures(ending) { source, token in
            source.map { [token] in $0 + token.id }.buffer(timeSpan: .seconds(3), count: 5, scheduler: scheduler)
        }
    }

    @Test("buffer(timeSpan:count:scheduler:) delivers an array caused from inside its observer after the current one")
    func reentrant() {
        // Every array is sent from the scheduler: the clock moves once the source has completed.
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        let received = Shared<[String]>([])
        let depth = Shared(0)
        let subscription = subject.buffer(timeSpan: .seconds(3), count: 1, scheduler: scheduler).observe { array in
            received.value.append("\(array)")
            depth.value += 1
            if depth.value < 8 { subject.send(1 + depth.value) }
            received.value.append("end \(array)")
        }
        subject.send(1)
        scheduler.advance()
        subject.complete()
        scheduler.advance()
        #expect(received.value == (1...8).flatMap { ["\([$0])", "end \([$0])"] })
        withExtendedLifetime(subscription) {}
    }

    @Test("buffer(timeSpan:count:scheduler:) with a bad argument stops the process with a message naming it",
          arguments: ["timeSpan", "count"])
    func badArguments(argument: String) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [argument] in
            let scheduler = TestScheduler()
            if argument == "count" {
                _ = PublishSubject<Int>().buffer(timeSpan: .seconds(1), count: 0, scheduler: scheduler)
            } else {
                _ = PublishSubject<Int>().buffer(timeSpan: .zero, count: 1, scheduler: scheduler)
            }
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("buffer(timeSpan:count:scheduler:)") && message.contains(argument), "message: \(message)")
        #endif
    }
}
