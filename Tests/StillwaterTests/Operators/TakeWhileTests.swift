import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("take(while:)")
struct TakeWhileTests {
    @Test("take(while:) sends values while the predicate holds, then completes without the first that fails it")
    func passesValues() {
        let recorded = events(of: { $0.take(while: { $0 < 3 }) }, sending: [1, 2, 3, 1], then: nil)
        #expect(recorded == [.next(1), .next(2), .completed])
    }

    @Test("take(while:) never asks the predicate again after it failed")
    func predicateStops() {
        let asked = Shared<[Int]>([])
        _ = events(of: { $0.take(while: { asked.value.append($0); return $0 < 2 }) }, sending: [1, 2, 3, 4])
        #expect(asked.value == [1, 2])
    }

    @Test("take(while:) passes the source's completion on when the predicate always holds")
    func completion() {
        #expect(events(of: { $0.take(while: { _ in true }) }, sending: [1, 2]) == [.next(1), .next(2), .completed])
    }

    @Test("take(while:) completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.take(while: { _ in true }) } }

    @Test("take(while:) passes the error on")
    func error() { expectForwardsError({ $0.take(while: { _ in true }) }, sending: [1, 2], expecting: [1, 2]) }

    @Test("take(while:) cancels its subscription to the source when the predicate fails")
    func cancelsUpstream() {
        let watched = WatchedSubject()
        let recorder = Recorder(watched.stream.take(while: { $0 < 2 }))
        watched.subject.send(1)
        #expect(!watched.cancelled.value)
        watched.subject.send(2)
        #expect(watched.cancelled.value)
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test("take(while:) stops an endless synchronous source, also behind value-stage operators and a take")
    func endlessSource() {
        let endless = Observable.from(sequence(first: 1) { $0 + 1 })
        #expect(Recorder(endless.take(while: { $0 < 4 })).values == [1, 2, 3])
        #expect(Recorder(endless.map { $0 * 2 }.take(while: { $0 < 8 })).values == [2, 4, 6])
        #expect(Recorder(endless.take(while: { _ in true }).take(3)).values == [1, 2, 3])
    }

    @Test("take(while:) stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.take(while: { _ in true }) } }

    @Test("take(while:) releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.take(while: { [token] in $0 + token.id < 100 }) }
    }

    @Test("take(while:) releases what the chain captured once the predicate fails")
    func releasesAtStop() {
        expectReleasesWhenEndingEarly(sending: [1, 2]) { source, token in
            source.take(while: { [token] in $0 + token.id < 2 })
        }
    }

    @Test("take(while:) delivers a value sent from inside its observer after the current one")
    func reentrant() {
        let subject = PublishSubject<Int>()
        let received = Shared<[Int]>([])
        let subscription = subject.take(while: { $0 < 3 }).observe { value in
            received.value.append(value)
            subject.send(value + 1)
            received.value.append(-value)
        }
        subject.send(1)
        #expect(received.value == [1, -1, 2, -2])
        withExtendedLifetime(subscription) {}
    }

    @Test("take(while:) on a relay stays infallible")
    func infallible() {
        let relay = PublishRelay<Int>()
        let result: Infallible<Int> = relay.take(while: { $0 < 2 })
        let recorder = Recorder(result)
        relay.accept(1)
        relay.accept(2)
        #expect(recorder.events == [.next(1), .completed])
    }
}

@Suite("skip(while:)")
struct SkipWhileTests {
    @Test("skip(while:) drops values while the predicate holds, then passes everything")
    func passesValues() {
        #expect(values(of: { $0.skip(while: { $0 < 3 }) }, sending: [1, 2, 3, 1, 4]) == [3, 1, 4])
    }

    @Test("skip(while:) never asks the predicate again after it failed")
    func predicateStops() {
        let asked = Shared<[Int]>([])
        _ = events(of: { $0.skip(while: { asked.value.append($0); return $0 < 2 }) }, sending: [1, 2, 3, 4])
        #expect(asked.value == [1, 2])
    }

    @Test("skip(while:) passes the completion on when it dropped everything")
    func completion() {
        #expect(events(of: { $0.skip(while: { _ in true }) }, sending: [1, 2]) == [.completed])
    }

    @Test("skip(while:) completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.skip(while: { _ in false }) } }

    @Test("skip(while:) passes the error on")
    func error() { expectForwardsError({ $0.skip(while: { $0 < 2 }) }, sending: [1, 2, 3], expecting: [2, 3]) }

    @Test("skip(while:) stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.skip(while: { _ in false }) } }

    @Test("skip(while:) starts again for each subscription")
    func perSubscription() {
        let source = Observable.of(1, 5, 1)
        let skipping = source.skip(while: { $0 < 3 })
        #expect(Recorder(skipping).values == [5, 1])
        #expect(Recorder(skipping).values == [5, 1])
    }

    @Test("skip(while:) releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.skip(while: { [token] in $0 + token.id < 0 }) }
    }

    @Test("skip(while:) delivers a value sent from inside its observer after the current one")
    func reentrant() {
        let subject = PublishSubject<Int>()
        let received = Shared<[Int]>([])
        let subscription = subject.skip(while: { $0 < 2 }).observe { value in
            received.value.append(value)
            if value < 4 { subject.send(value + 1) }
            received.value.append(-value)
        }
        subject.send(1)
        subject.send(2)
        #expect(received.value == [2, -2, 3, -3, 4, -4])
        withExtendedLifetime(subscription) {}
    }

    @Test("skip(while:) on a relay stays infallible")
    func infallible() {
        let relay = PublishRelay<Int>()
        let result: Infallible<Int> = relay.skip(while: { $0 < 2 })
        let recorder = Recorder(result)
        for value in [1, 2, 1] { relay.accept(value) }
        #expect(recorder.values == [2, 1])
    }
}
