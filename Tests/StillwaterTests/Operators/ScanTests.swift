import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("scan")
struct ScanTests {
    @Test("scan sends the running accumulation", arguments: [[], [1], [1, 2, 3], [5, -5, 5]])
    func accumulates(input: [Int]) {
        var running = 0
        let expected = input.map { running += $0; return running }
        #expect(values(of: { $0.scan(0, +) }, sending: input) == expected)
    }

    @Test("scan starts again from the initial value for each subscription")
    func perSubscription() {
        let source = Observable.of(1, 2, 3).scan(10, +)
        #expect(Recorder(source).values == [11, 13, 16])
        #expect(Recorder(source).values == [11, 13, 16])
    }

    @Test("scan can change the type of the values")
    func changesType() {
        #expect(values(of: { $0.scan("") { $0 + "\($1)" } }, sending: [1, 2, 3]) == ["1", "12", "123"])
    }

    @Test("scan completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.scan(0, +) } }

    @Test("scan passes the error on when the source fails")
    func error() { expectForwardsError({ $0.scan(0, +) }, sending: [1, 2], expecting: [1, 3]) }

    @Test("scan completes when the source completes")
    func completion() {
        #expect(events(of: { $0.scan(1, *) }, sending: [2, 3]) == [.next(2), .next(6), .completed])
    }

    @Test("scan stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.scan(0, +) } }

    @Test("scan releases what its closure captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.scan(0) { [token] in $0 + $1 + token.id } }
    }
}
