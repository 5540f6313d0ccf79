import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("reduce, toArray")
struct CollectTests {
    @Test("reduce sends the final accumulation once, on completion")
    func reduce() {
        #expect(events(of: { $0.reduce(10, +) }, sending: [1, 2, 3]) == [.next(16), .completed])
        #expect(events(of: { $0.reduce(10, +) }, sending: [1, 2], then: nil).isEmpty)
    }

    @Test("toArray sends every value in one array on completion")
    func toArray() {
        #expect(events(of: { $0.toArray() }, sending: [3, 1, 2]) == [.next([3, 1, 2]), .completed])
        #expect(events(of: { $0.toArray() }, sending: [1], then: nil).isEmpty)
    }

    @Test("reduce gives the initial value and toArray an empty array for an empty source")
    func empty() {
        #expect(events(of: { $0.reduce(10, +) }, sending: []) == [.next(10), .completed])
        #expect(events(of: { $0.toArray() }, sending: []) == [.next([]), .completed])
    }

    @Test("reduce and toArray pass the error on and drop what they collected")
    func error() {
        expectForwardsError({ $0.reduce(0, +) }, sending: [1, 2], expecting: [])
        expectForwardsError({ $0.toArray() }, sending: [1, 2], expecting: [])
    }

    @Test("reduce and toArray send nothing after a cancel")
    func cancel() {
        let subject = PublishSubject<Int>()
        let sum = Recorder(subject.reduce(0, +))
        let all = Recorder(subject.toArray())
        subject.send(1)
        sum.cancel()
        all.cancel()
        subject.complete()
        #expect(sum.events.isEmpty && all.events.isEmpty)
    }

    @Test("reduce and toArray start again for each subscription")
    func perSubscription() {
        let numbers = Observable.of(1, 2, 3)
        #expect(Recorder(numbers.reduce(0, +)).values == [6])
        #expect(Recorder(numbers.reduce(0, +)).values == [6])
        #expect(Recorder(numbers.toArray()).values == [[1, 2, 3]])
        #expect(Recorder(numbers.toArray()).values == [[1, 2, 3]])
    }

    @Test("reduce and toArray release what the chain captured", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.reduce(0) { [token] in $0 + $1 + token.id } }
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.toArray() }
    }

    @Test("toArray lets go of the values it collected once it sent them")
    func releasesValues() { expectReleasesHeldValues { $0.toArray() } }

    @Test("reduce and toArray finish their delivery before a value sent from inside the observer")
    func reentrant() {
        expectSendsAtEndUnnested({ $0.toArray() }, sending: [1, 2], expecting: ["[1, 2]"])
        expectSendsAtEndUnnested({ $0.reduce(0, +) }, sending: [1, 2], expecting: ["3"])
    }

    @Test("reduce and toArray of a relay stay infallible")
    func infallible() {
        let relay = PublishRelay<Int>()
        let sum: Infallible<Int> = relay.reduce(0, +)
        let all: Infallible<[Int]> = relay.toArray()
        let recorder = Recorder(sum)
        relay.accept(1)
        #expect(recorder.events.isEmpty)
        #expect(Recorder(all).events.isEmpty)
    }
}
