import Foundation
import Synchronization
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("do")
struct DoTests {
    /// A `do` that logs every hook into `log`.
    func logged(_ source: Observable<Int>, into log: Shared<[String]>) -> Observable<Int> {
        source.do(
            onNext: { log.value.append("next \($0)") },
            onError: { log.value.append("error \($0)") },
            onCompleted: { log.value.append("completed") },
            onSubscribe: { log.value.append("subscribe") },
            onCancel: { log.value.append("cancel") }
        )
    }

    @Test("do runs onSubscribe before the source is subscribed, and onNext before each value passes on")
    func order() {
        let log = Shared<[String]>([])
        let source = Observable<Int> { observer in
            log.value.append("source subscribed")
            return .empty
        }
        let first = Recorder(logged(source, into: log))
        #expect(log.value == ["subscribe", "source subscribed"])
        withExtendedLifetime(first) {}

        log.value = []
        let subject = PublishSubject<Int>()
        let subscription = logged(subject.asObservable(), into: log).subscribe { event in
            log.value.append("observer \(event)")
        }
        subject.send(1)
        subject.complete()
        #expect(log.value == ["subscribe", "next 1", "observer next(1)", "completed", "observer completed"])
        withExtendedLifetime(subscription) {}
    }

    @Test("do passes the values and the end through unchanged")
    func passesThrough() {
        #expect(values(of: { $0.do() }, sending: [1, 2, 3]) == [1, 2, 3])
        expectCompletesWhenEmpty { $0.do(onNext: { _ in }) }
        expectForwardsError({ $0.do(onNext: { _ in }) }, sending: [1], expecting: [1])
    }

    @Test("do runs onError with the error before it passes on, and not onCancel afterwards")
    func error() {
        let log = Shared<[String]>([])
        let subject = PublishSubject<Int>()
        let recorder = Recorder(logged(subject.asObservable(), into: log))
        subject.fail(TestError(code: 4))
        recorder.cancel()
        #expect(log.value == ["subscribe", "error TestError(4)"])
        #expect(recorder.events == [.error(TestError(code: 4))])
    }

    @Test("do runs onCancel for a cancel, a release, and a take further down; never after the end",
          arguments: Ending.allCases)
    func cancelOnlyForCancel(ending: Ending) {
        let log = Shared<[String]>([])
        let subject = PublishSubject<Int>()
        var subscription: Subscription? = logged(subject.asObservable(), into: log).subscribe { _ in }
        switch ending {
        case .cancel: subscription?.cancel()
        case .release: subscription = nil
        case .complete: subject.complete()
        case .fail: subject.fail(TestError())
        }
        subscription?.cancel()
        let hooks = log.value.dropFirst()
        switch ending {
        case .cancel, .release: #expect(Array(hooks) == ["cancel"])
        case .complete: #expect(Array(hooks) == ["completed"])
        case .fail: #expect(Array(hooks) == ["error TestError(1)"])
        }
    }

    @Test("do runs onCancel when a take further down has its count, even on a synchronous source")
    func cancelByTake() {
        let log = Shared<[String]>([])
        _ = Recorder(logged(Observable.from(1...10), into: log).take(2))
        #expect(log.value == ["subscribe", "next 1", "next 2", "cancel"])
        log.value = []
        _ = Recorder(logged(Observable.from(sequence(first: 1) { $0 + 1 }), into: log).take(1))
        #expect(log.value == ["subscribe", "next 1", "cancel"])
    }

    @Test("do runs exactly one of onCancel and onCompleted when a cancel races with the end",
          .timeLimit(.minutes(5)))
    func raceOfCancelAndEnd() async {
        for _ in 0..<300 {
            let subject = PublishSubject<Int>()
            let hooks = AtomicCounter()
            let ends = AtomicCounter()
            let subscription = subject.do(onCompleted: { hooks.increment() }, onCancel: { hooks.increment() })
                .subscribe(onCompleted: { ends.increment() })
            let (done, finish) = AsyncStream<Void>.makeStream()
            Thread.detachNewThread {
                subject.complete()
                finish.yield()
            }
            subscription.cancel()
            var waiting = done.makeAsyncIterator()
            await waiting.next()
            #expect(hooks.value == 1)
            #expect(ends.value <= 1)
        }
    }

    @Test("do stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.do(onNext: { _ in }) } }

    @Test("do releases its closures and the chain's captures when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.do(onNext: { [token] _ in _ = token }, onCancel: { [token] in _ = token })
        }
    }

    @Test("do delivers a value sent from inside its observer after the current one")
    func reentrant() {
        expectQueuesReentrantSends({ $0.do(onNext: { _ in }) }, sending: 1, expecting: Array(1...8))
    }

    @Test("do on a relay stays infallible")
    func infallible() {
        let relay = PublishRelay<Int>()
        let seen = Shared<[Int]>([])
        let result: Infallible<Int> = relay.do(onNext: { seen.value.append($0) })
        let recorder = Recorder(result)
        relay.accept(1)
        #expect(seen.value == [1])
        #expect(recorder.values == [1])
    }
}

@Suite("pairwise")
struct PairwiseTests {
    @Test("pairwise sends each value with the one before it")
    func pairs() {
        let recorded = values(of: { $0.pairwise().map { "\($0.0)-\($0.1)" } }, sending: [1, 2, 3, 4])
        #expect(recorded == ["1-2", "2-3", "3-4"])
    }

    @Test("pairwise sends nothing for a single value, and completes")
    func single() {
        #expect(events(of: { $0.pairwise().map { $0.0 } }, sending: [1]) == [.completed])
        expectCompletesWhenEmpty { $0.pairwise() }
    }

    @Test("pairwise passes the error on")
    func error() {
        expectForwardsError({ $0.pairwise().map { $0.0 * 10 + $0.1 } }, sending: [1, 2, 3], expecting: [12, 23])
    }

    @Test("pairwise starts again for each subscription")
    func perSubscription() {
        let pairs = Observable.of(1, 2).pairwise().map { "\($0.0)-\($0.1)" }
        #expect(Recorder(pairs).values == ["1-2"])
        #expect(Recorder(pairs).values == ["1-2"])
    }

    @Test("pairwise stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.pairwise() } }

    @Test("pairwise releases what the chain captured", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.pairwise() }
    }

    @Test("pairwise delivers a pair caused from inside its observer after the current one")
    func reentrant() {
        let subject = PublishSubject<Int>()
        let received = Shared<[String]>([])
        let subscription = subject.pairwise().observe { pair in
            received.value.append("\(pair.0)-\(pair.1)")
            if pair.1 < 4 { subject.send(pair.1 + 1) }
            received.value.append("end")
        }
        subject.send(1)
        subject.send(2)
        #expect(received.value == ["1-2", "end", "2-3", "end", "3-4", "end"])
        withExtendedLifetime(subscription) {}
    }

    @Test("pairwise of a relay stays infallible")
    func infallible() {
        let relay = BehaviorRelay(1)
        let result: Infallible<(Int, Int)> = relay.pairwise()
        let recorder = Recorder(result.map { $0.0 + $0.1 })
        relay.accept(2)
        #expect(recorder.values == [3])
    }
}
