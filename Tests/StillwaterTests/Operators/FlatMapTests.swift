import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

/// The operators of the `flatMap` family, for the scenarios they share.
enum InnerOperator: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case flatMap, concatMap, flatMapFirst
    var testDescription: String { rawValue }

    func apply(_ outer: PublishSubject<Int>, _ transform: @escaping (Int) -> PublishSubject<Int>) -> Observable<Int> {
        switch self {
        case .flatMap: outer.flatMap(transform)
        case .concatMap: outer.concatMap(transform)
        case .flatMapFirst: outer.flatMapFirst(transform)
        }
    }
}

@Suite("flatMap")
struct FlatMapTests {
    @Test("flatMap sends the values of every inner stream as they arrive")
    func mergesInners() {
        let outer = PublishSubject<Int>()
        let inners = (0..<2).map { _ in PublishSubject<String>() }
        let recorder = Recorder(outer.flatMap { inners[$0] })
        outer.send(0)
        outer.send(1)
        inners[1].send("b1")
        inners[0].send("a1")
        inners[1].send("b2")
        #expect(recorder.values == ["b1", "a1", "b2"])
    }

    @Test("flatMap completes only when the outer stream and every inner stream have completed")
    func completion() {
        let outer = PublishSubject<Int>()
        let inners = (0..<2).map { _ in PublishSubject<Int>() }
        let recorder = Recorder(outer.flatMap { inners[$0] })
        outer.send(0)
        outer.send(1)
        outer.complete()
        inners[0].complete()
        #expect(!recorder.isCompleted)
        inners[1].send(7)
        inners[1].complete()
        #expect(recorder.events == [.next(7), .completed])
    }

    @Test("flatMap(maxConcurrent:) runs at most that many inner streams; the others wait in order")
    func maxConcurrent() {
        let outer = PublishSubject<Int>()
        let inners = (0..<4).map { _ in PublishSubject<Int>() }
        let subscribed = Shared<[Int]>([])
        let recorder = Recorder(outer.flatMap(maxConcurrent: 2) { index -> PublishSubject<Int> in
            subscribed.value.append(index)
            return inners[index]
        })
        for index in 0..<4 { outer.send(index) }
        outer.complete()
        #expect(subscribed.value == [0, 1])
        inners[1].complete()
        #expect(subscribed.value == [0, 1, 2])
        inners[2].send(20)
        inners[0].complete()
        #expect(subscribed.value == [0, 1, 2, 3])
        inners[3].complete()
        #expect(!recorder.isCompleted)
        inners[2].complete()
        #expect(recorder.events == [.next(20), .completed])
    }

    @Test("flatMap(maxConcurrent:) needs a limit of 1 or more")
    func badLimit() async {
        await #expect(processExitsWith: .failure) {
            _ = Observable<Int>.never().flatMap(maxConcurrent: 0) { Observable.just($0) }
        }
    }

    @Test("an inner error fails flatMap and cancels the outer stream and the other inners")
    func innerError() {
        let outer = PublishSubject<Int>()
        let cancelled = Shared<[Int]>([])
        let failing = PublishSubject<Int>()
        let transformed = Shared<[Int]>([])
        let recorder = Recorder(outer.flatMap { index -> Observable<Int> in
            transformed.value.append(index)
            return index == 1 ? failing.asObservable()
                : Observable<Int>.create { _ in Subscription { cancelled.value.append(index) } }
        })
        outer.send(0)
        outer.send(1)
        failing.fail(TestError(code: 4))
        outer.send(2)
        #expect(recorder.events == [.error(TestError(code: 4))])
        #expect(cancelled.value == [0])
        #expect(transformed.value == [0, 1], "the outer stream must be cancelled")
    }

    @Test("flatMap of a stream that sends while being subscribed stops under take")
    func endlessOuterUnderTake() {
        let recorder = Recorder(Observable.from(sequence(first: 1) { $0 + 1 }).flatMap { Observable.just($0) }.take(3))
        #expect(recorder.events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test("flatMap completes without values when its source is empty")
    func empty() { expectCompletesWhenEmpty { $0.flatMap { Observable.just($0) } } }

    @Test("flatMap passes the outer error on")
    func error() { expectForwardsError({ $0.flatMap { Observable.just($0 * 2) } }, sending: [1, 2], expecting: [2, 4]) }

    @Test("flatMap stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.flatMap { Observable.of($0, $0) } } }

    @Test("flatMap releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.flatMap { [token] value in Observable.just(value + token.id) }
        }
    }

    @Test("a value an inner stream sends from inside the observer is delivered after the current one",
          arguments: InnerOperator.allCases)
    func reentrantSend(kind: InnerOperator) {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        let seen = Shared<[String]>([])
        let subscription = kind.apply(outer) { _ in inner }.observe { value in
            seen.value.append("\(value)")
            if value == 1 {
                inner.send(2)
                seen.value.append("end")
            }
        }
        outer.send(0)
        inner.send(1)
        #expect(seen.value == ["1", "end", "2"])
        withExtendedLifetime(subscription) {}
    }

    @Test("flatMap delivers the values of inner streams on several threads one at a time")
    func concurrentInners() {
        let outer = PublishSubject<Int>()
        let inners = (0..<4).map { _ in PublishSubject<Int>() }
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = outer.flatMap(maxConcurrent: 4) { inners[$0] }
            .observe { _ in detector.enter { count.value += 1 } }
        for index in 0..<4 { outer.send(index) }
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for value in 0..<3_000 { inners[lane].send(value) }
        }
        #expect(count.value == 12_000)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }
}

@Suite("concatMap")
struct ConcatMapTests {
    @Test("concatMap runs one inner stream at a time, in the order of the values")
    func oneAtATime() {
        let outer = PublishSubject<Int>()
        let inners = (0..<3).map { _ in PublishSubject<Int>() }
        let recorder = Recorder(outer.concatMap { inners[$0] })
        for index in 0..<3 { outer.send(index) }
        inners[1].send(99)                      // not subscribed yet: lost
        inners[0].send(0)
        inners[0].complete()
        inners[1].send(1)
        inners[1].complete()
        inners[2].send(2)
        outer.complete()
        #expect(!recorder.isCompleted)
        inners[2].complete()
        #expect(recorder.events == [.next(0), .next(1), .next(2), .completed])
    }

    @Test("concatMap of inner streams that complete at once keeps order and the stack flat")
    func synchronousInners() {
        var spread = StackSpread()
        let recorder = Recorder(Observable.from(0..<5_000).concatMap { Observable.of($0, -$0) }.map { value in
            spread.sample()
            return value
        })
        #expect(recorder.values.count == 10_000)
        #expect(Array(recorder.values.prefix(4)) == [0, 0, 1, -1])
        #expect(spread.spread < 64 * 1024)
    }

    @Test("concatMap completes without values when its source is empty")
    func empty() { expectCompletesWhenEmpty { $0.concatMap { Observable.just($0) } } }

    @Test("concatMap passes the error on")
    func error() { expectForwardsError({ $0.concatMap { Observable.just($0 + 1) } }, sending: [1], expecting: [2]) }

    @Test("concatMap stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.concatMap { Observable.just($0) } } }

    @Test("concatMap releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.concatMap { [token] value in Observable.just(value + token.id) }
        }
    }

    @Test("a value sent to concatMap from inside its observer is delivered after the current one")
    func reentrantSend() {
        let outer = PublishSubject<Int>()
        let seen = Shared<[String]>([])
        let subscription = outer.concatMap { Observable.just($0) }.observe { value in
            seen.value.append("\(value)")
            if value == 1 {
                outer.send(2)
                seen.value.append("end")
            }
        }
        outer.send(1)
        #expect(seen.value == ["1", "end", "2"])
        withExtendedLifetime(subscription) {}
    }
}

@Suite("flatMapFirst")
struct FlatMapFirstTests {
    @Test("flatMapFirst drops the values that come while an inner stream runs")
    func dropsWhileBusy() {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<String>()
        let recorder = Recorder(outer.flatMapFirst { value in inner.take(1).map { "\(value)\($0)" } })
        outer.send(1)
        outer.send(2)
        inner.send("a")
        outer.send(3)
        inner.send("b")
        outer.complete()
        #expect(recorder.events == [.next("1a"), .next("3b"), .completed])
    }

    @Test("flatMapFirst completes only after the running inner stream completed")
    func waitsForInner() {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        let recorder = Recorder(outer.flatMapFirst { _ in inner })
        outer.send(1)
        outer.complete()
        #expect(!recorder.isCompleted)
        inner.complete()
        #expect(recorder.isCompleted)
    }

    @Test("flatMapFirst completes without values when its source is empty")
    func empty() { expectCompletesWhenEmpty { $0.flatMapFirst { Observable.just($0) } } }

    @Test("flatMapFirst passes the error on, from the outer or the inner stream")
    func error() {
        expectForwardsError({ $0.flatMapFirst { Observable.just($0) } }, sending: [1], expecting: [1])
        let recorder = Recorder(Observable.just(1).flatMapFirst { _ in Observable<Int>.failure(TestError()) })
        #expect(recorder.events == [.error(TestError())])
    }

    @Test("flatMapFirst stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.flatMapFirst { Observable.just($0) } } }

    @Test("flatMapFirst releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.flatMapFirst { [token] value in Observable.just(value + token.id) }
        }
    }

    @Test("flatMapFirst delivers one event at a time when the outer and inner streams send from two threads")
    func concurrent() {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        let detector = OverlapDetector()
        let count = Shared(0)
        let subscription = outer.flatMapFirst { _ in inner }.observe { _ in detector.enter { count.value += 1 } }
        outer.send(0)
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            for value in 0..<5_000 { (lane == 0 ? outer : inner).send(value) }
        }
        #expect(count.value == 5_000)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(subscription) {}
    }
}

@Suite("MergeInnerMachine")
struct MergeInnerMachineTests {
    /// A step as text, so that a sequence of them reads as one expectation.
    func describe(_ step: MergeInnerMachine<String>.Step) -> String {
        switch step {
        case .none: "none"
        case .start(let value, let id): "start \(value) #\(id)"
        case .complete: "complete"
        }
    }

    @Test("with waiting values, a full machine queues them and starts them in order as inner streams complete")
    func waits() {
        var machine = MergeInnerMachine<String>(limit: 2, whenFull: .wait)
        var steps = ["a", "b", "c", "d"].map { describe(machine.outerValue($0)) }
        #expect(steps == ["start a #1", "start b #2", "none", "none"])
        #expect(machine.waiting.count == 2)
        steps = [machine.innerCompleted(), machine.outerCompleted(), machine.innerCompleted()].map(describe)
        #expect(steps == ["start c #3", "none", "start d #4"])
        steps = [machine.innerCompleted(), machine.innerCompleted()].map(describe)
        #expect(steps == ["none", "complete"], "completes when the outer and the last inner stream have")
        guard case .finished = machine.state else {
            Issue.record("expected finished, got \(machine.state)")
            return
        }
        #expect(describe(machine.outerValue("e")) == "none", "a finished machine starts nothing")
    }

    @Test("with dropping, a full machine drops values, and starts again once an inner stream completed")
    func drops() {
        var machine = MergeInnerMachine<String>(limit: 1, whenFull: .drop)
        let steps = [
            machine.outerValue("a"), machine.outerValue("b"), machine.innerCompleted(), machine.outerValue("c"),
        ].map(describe)
        #expect(steps == ["start a #1", "none", "none", "start c #2"])
        #expect(machine.waiting.isEmpty)
    }

    @Test("the outer stream's completion completes at once when no inner stream runs")
    func completesWhenIdle() {
        var machine = MergeInnerMachine<String>(limit: .max, whenFull: .wait)
        #expect(describe(machine.outerValue("a")) == "start a #1")
        #expect(describe(machine.innerCompleted()) == "none", "the outer stream may still send")
        #expect(describe(machine.outerCompleted()) == "complete")
    }

    @Test("a failure ends the machine and forgets the waiting values")
    func failure() {
        var machine = MergeInnerMachine<String>(limit: 1, whenFull: .wait)
        _ = machine.outerValue("a")
        _ = machine.outerValue("b")
        machine.fail()
        #expect(machine.waiting.isEmpty)
        #expect(describe(machine.innerCompleted()) == "none", "a waiting value never starts after a failure")
        #expect(describe(machine.outerCompleted()) == "none")
    }
}

@Suite("flatMap family, endings")
struct FlatMapEndingTests {
    @Test("an outer failure cancels the running inner streams, and the waiting values never start")
    func outerFailureWithWaiting() {
        let outer = PublishSubject<Int>()
        let inners = (0..<3).map { _ in PublishSubject<Int>() }
        let subscribed = Shared<[Int]>([])
        let recorder = Recorder(outer.flatMap(maxConcurrent: 1) { index -> PublishSubject<Int> in
            subscribed.value.append(index)
            return inners[index]
        })
        for index in 0..<3 { outer.send(index) }
        outer.fail(TestError(code: 6))
        inners[0].complete()
        #expect(recorder.events == [.error(TestError(code: 6))])
        #expect(subscribed.value == [0])
        #expect(inners[0].core.observerCount == 0)
    }

    @Test("the family completes at once when the outer stream completes after its inner stream did",
          arguments: InnerOperator.allCases)
    func completesAfterInner(operator: InnerOperator) {
        let outer = PublishSubject<Int>()
        let inner = PublishSubject<Int>()
        let recorder = Recorder(`operator`.apply(outer) { _ in inner })
        outer.send(1)
        inner.send(10)
        inner.complete()
        #expect(!recorder.isCompleted)
        outer.complete()
        #expect(recorder.events == [.next(10), .completed])
    }
}
