import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("firstElement, lastElement, element(at:)")
struct ElementsTests {
    @Test("firstElement sends the first value, completes and cancels its source")
    func first() {
        let watched = WatchedSubject()
        let recorder = Recorder(watched.stream.firstElement())
        watched.subject.send(1)
        #expect(watched.cancelled.value)
        watched.subject.send(2)
        #expect(recorder.events == [.next(1), .completed])
    }

    @Test("firstElement and lastElement complete without a value when the source is empty")
    func emptyEnds() {
        expectCompletesWhenEmpty { $0.firstElement() }
        expectCompletesWhenEmpty { $0.lastElement() }
    }

    @Test("firstElement stops an endless synchronous source")
    func firstOfEndless() {
        #expect(Recorder(Observable.from(sequence(first: 7) { $0 + 1 }).firstElement()).events == [.next(7), .completed])
    }

    @Test("lastElement sends the last value on completion")
    func last() {
        #expect(events(of: { $0.lastElement() }, sending: [1, 2, 3]) == [.next(3), .completed])
    }

    @Test("firstElement and lastElement pass the error on; lastElement drops the value it held")
    func errors() {
        expectForwardsError({ $0.firstElement() }, sending: [], expecting: [])
        expectForwardsError({ $0.lastElement() }, sending: [1, 2], expecting: [])
    }

    @Test("element(at:) sends the value at the index, completes and cancels its source")
    func elementAt() {
        let watched = WatchedSubject()
        let recorder = Recorder(watched.stream.element(at: 2))
        for value in [10, 20] { watched.subject.send(value) }
        #expect(!watched.cancelled.value)
        watched.subject.send(30)
        #expect(watched.cancelled.value)
        watched.subject.send(40)
        #expect(recorder.events == [.next(30), .completed])
    }

    @Test("element(at:) fails with ElementIndexOutOfRange when the source completes too early",
          arguments: [0, 1, 3])
    func tooShort(index: Int) {
        let sent = Array(0..<min(index, 2))
        let recorded = events(of: { $0.element(at: index) }, sending: sent)
        #expect(recorded == [.error(ElementIndexOutOfRange(index: index, count: sent.count))])
    }

    @Test("element(at:) passes the source's error on")
    func elementAtError() { expectForwardsError({ $0.element(at: 5) }, sending: [1, 2], expecting: []) }

    @Test("element(at:) stops an endless synchronous source, also behind a take")
    func elementAtEndless() {
        let endless = Observable.from(sequence(first: 0) { $0 + 1 })
        #expect(Recorder(endless.element(at: 4)).events == [.next(4), .completed])
        #expect(Recorder(endless.do(onNext: { _ in }).take(2)).values == [0, 1])
    }

    @Test("the element operators stop when cancelled mid-stream")
    func cancel() {
        expectStopsWhenCancelled { $0.element(at: 1) }
        expectStopsWhenCancelled { $0.firstElement() }
    }

    @Test("lastElement sends nothing after a cancel, not even on completion")
    func lastCancelled() {
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.lastElement())
        subject.send(1)
        recorder.cancel()
        subject.complete()
        #expect(recorder.events.isEmpty)
    }

    @Test("the element operators release what the chain captured when the subscription ends",
          arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.element(at: 5) }
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.lastElement() }
    }

    @Test("element(at:) releases what the chain captured once it sent its value")
    func releasesAtIndex() {
        expectReleasesWhenEndingEarly(sending: [1, 2, 3]) { source, token in
            source.map { [token] in $0 + token.id }.element(at: 2)
        }
    }

    @Test("the element operators deliver a value sent from inside the observer after the current one")
    func reentrant() {
        expectQueuesReentrantSends({ $0.element(at: 0) }, sending: 1, expecting: [1])
        expectSendsAtEndUnnested({ $0.lastElement() }, sending: [1, 2], expecting: ["2"])
    }

    @Test("element(at:) with a negative index stops the process with a message naming the argument")
    func negativeIndex() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PublishSubject<Int>().element(at: -1)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("element(at:)") && message.contains("index"), "message: \(message)")
        #endif
    }

    @Test("firstElement and lastElement of a relay stay infallible")
    func infallible() {
        let relay = BehaviorRelay(5)
        let first: Infallible<Int> = relay.firstElement()
        let last: Infallible<Int> = relay.lastElement()
        #expect(Recorder(first).events == [.next(5), .completed])
        #expect(Recorder(last).events.isEmpty)
    }
}

@Suite("takeLast")
struct TakeLastTests {
    @Test("takeLast sends the last count values on completion, in order", arguments: [1, 2, 3, 5])
    func values(count: Int) {
        let recorded = events(of: { $0.takeLast(count) }, sending: [1, 2, 3])
        #expect(recorded == Array([1, 2, 3].suffix(count)).map(Event.next) + [.completed])
    }

    @Test("takeLast sends nothing before the source completes")
    func waits() {
        #expect(events(of: { $0.takeLast(2) }, sending: [1, 2, 3], then: nil).isEmpty)
    }

    @Test("takeLast(0) sends only the completion")
    func zero() {
        #expect(events(of: { $0.takeLast(0) }, sending: [1, 2]) == [.completed])
        expectForwardsError({ $0.takeLast(0) }, sending: [1], expecting: [])
    }

    @Test("takeLast completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.takeLast(3) } }

    @Test("takeLast passes the error on and drops what it held")
    func error() { expectForwardsError({ $0.takeLast(2) }, sending: [1, 2, 3], expecting: []) }

    @Test("takeLast sends nothing after a cancel")
    func cancel() {
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.takeLast(2))
        subject.send(1)
        recorder.cancel()
        subject.complete()
        #expect(recorder.events.isEmpty)
    }

    @Test("takeLast releases what the chain captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.takeLast(2) }
    }

    @Test("takeLast lets go of the values it held once it sent them")
    func releasesValues() { expectReleasesHeldValues { $0.takeLast(1) } }

    @Test("takeLast sends its values one at a time when the observer sends to the source")
    func reentrant() {
        expectSendsAtEndUnnested({ $0.takeLast(2) }, sending: [1, 2, 3], expecting: ["2", "3"])
    }

    @Test("takeLast with a negative count stops the process with a message naming the argument")
    func negativeCount() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PublishSubject<Int>().takeLast(-1)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("takeLast(_:)") && message.contains("count"), "message: \(message)")
        #endif
    }
}

@Suite("ignoreElements, defaultIfEmpty")
struct IgnoreElementsTests {
    @Test("ignoreElements passes only the completion")
    func ignores() {
        let recorded = events(of: { $0.ignoreElements() }, sending: [1, 2, 3])
        #expect(recorded == [.completed])
    }

    @Test("ignoreElements completes when the source is empty, and passes the error on")
    func endsPass() {
        expectCompletesWhenEmpty { $0.ignoreElements() }
        let recorded = events(of: { $0.ignoreElements() }, sending: [1], then: .error(TestError()))
        #expect(recorded.count == 1 && recorded.first?.error as? TestError == TestError())
    }

    @Test("ignoreElements and defaultIfEmpty stop when cancelled mid-stream")
    func cancel() {
        expectStopsWhenCancelled { $0.defaultIfEmpty(0) }
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject.ignoreElements())
        recorder.cancel()
        subject.complete()
        #expect(recorder.events.isEmpty)
    }

    @Test("ignoreElements and defaultIfEmpty release what the chain captured", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.ignoreElements() }
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.defaultIfEmpty(0) }
    }

    @Test("defaultIfEmpty sends its value only when the source completes without values")
    func defaultValue() {
        #expect(events(of: { $0.defaultIfEmpty(9) }, sending: []) == [.next(9), .completed])
        #expect(events(of: { $0.defaultIfEmpty(9) }, sending: [1, 2]) == [.next(1), .next(2), .completed])
    }

    @Test("defaultIfEmpty passes the error on, also from an empty source")
    func defaultError() {
        expectForwardsError({ $0.defaultIfEmpty(9) }, sending: [], expecting: [])
        expectForwardsError({ $0.defaultIfEmpty(9) }, sending: [1], expecting: [1])
    }

    @Test("defaultIfEmpty delivers a value sent from inside its observer after the current one")
    func reentrant() {
        expectQueuesReentrantSends({ $0.defaultIfEmpty(0) }, sending: 1, expecting: Array(1...8))
    }

    @Test("ignoreElements and defaultIfEmpty of a relay stay infallible")
    func infallible() {
        let relay = PublishRelay<Int>()
        let ignored: Infallible<Never> = relay.ignoreElements()
        let defaulted: Infallible<Int> = relay.defaultIfEmpty(1)
        #expect(Recorder(ignored).events.isEmpty)
        #expect(Recorder(defaulted).events.isEmpty)
    }
}
