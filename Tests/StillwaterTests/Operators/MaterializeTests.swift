import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("materialize and dematerialize")
struct MaterializeTests {
    @Test("materialize sends each event as a value, then completes, also after a failure")
    func materialize() {
        #expect(events(of: { $0.materialize() }, sending: [1, 2])
                == [.next(.next(1)), .next(.next(2)), .next(.completed), .completed])
        #expect(events(of: { $0.materialize() }, sending: [1], then: .error(TestError()))
                == [.next(.next(1)), .next(.error(TestError())), .completed])
        expectStopsWhenCancelled { $0.materialize() }
    }

    @Test("dematerialize is materialize's inverse", arguments: [[], [1], [1, 2, 3]])
    func roundTrip(input: [Int]) {
        #expect(events(of: { $0.materialize().dematerialize() }, sending: input)
                == input.map(Event.next) + [.completed])
        #expect(events(of: { $0.materialize().dematerialize() }, sending: input, then: .error(TestError()))
                == input.map(Event.next) + [.error(TestError())])
    }

    @Test("dematerialize ends at the first terminal value and ignores what follows, and unsubscribes")
    func endsOnce() {
        let events = PublishSubject<Event<Int>>()
        let recorder = Recorder(events.dematerialize())
        events.send(.next(1))
        events.send(.error(TestError(code: 3)))
        events.send(.next(2))
        events.send(.completed)
        #expect(recorder.events == [.next(1), .error(TestError(code: 3))])
        #expect(events.core.observerCount == 0)
    }

    @Test("dematerialize stops when cancelled mid-stream")
    func dematerializeCancel() {
        expectStopsWhenCancelled { $0.materialize().dematerialize() }
    }

    @Test("a value sent from inside the observer is delivered after the current one, through both")
    func reentrant() {
        let source = PublishSubject<Int>()
        let received = Shared<[String]>([])
        let subscription = source.materialize().dematerialize().observe { value in
            received.value.append("\(value)")
            if value < 3 { source.send(value + 1) }
            received.value.append("/\(value)")
        }
        source.send(1)
        #expect(received.value == ["1", "/1", "2", "/2", "3", "/3"])
        withExtendedLifetime(subscription) {}
    }

    @Test("what the chain captured is released when it ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.map { [token] in $0 + token.id }.materialize().dematerialize()
        }
    }
}
