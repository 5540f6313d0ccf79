import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("startWith")
struct StartWithTests {
    @Test("startWith sends its values first, then the source's")
    func prefixes() {
        #expect(values(of: { $0.startWith(-2, -1) }, sending: [1, 2]) == [-2, -1, 1, 2])
    }

    @Test("startWith sends its values to each subscriber")
    func eachSubscriber() {
        let source = Observable.of(1).startWith(0)
        #expect(Recorder(source).values == [0, 1])
        #expect(Recorder(source).values == [0, 1])
    }

    @Test("startWith sends its values then completes when the source is empty")
    func empty() {
        #expect(events(of: { $0.startWith(0) }, sending: []) == [.next(0), .completed])
        expectCompletesWhenEmpty { $0.startWith() }
    }

    @Test("startWith passes the error on when the source fails")
    func error() { expectForwardsError({ $0.startWith(0) }, sending: [1], expecting: [0, 1]) }

    @Test("startWith completes when the source completes")
    func completion() {
        #expect(events(of: { $0.startWith(9) }, sending: [1]) == [.next(9), .next(1), .completed])
    }

    @Test("startWith stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.startWith(0) } }

    @Test("startWith releases the chain when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.startWith(0) }
    }
}
