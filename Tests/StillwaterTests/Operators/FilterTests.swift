import Testing
@testable import Stillwater

@Suite("filter")
struct FilterTests {
    @Test("filter passes only the values the predicate accepts",
          arguments: [[], [1, 3], [2, 4], [1, 2, 3, 4, 5, 6]])
    func passesAccepted(input: [Int]) {
        #expect(values(of: { $0.filter { $0.isMultiple(of: 2) } }, sending: input)
                == input.filter { $0.isMultiple(of: 2) })
    }

    @Test("filter completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.filter { _ in true } } }

    @Test("filter passes the error on when the source fails, even if it rejects every value")
    func error() { expectForwardsError({ $0.filter { _ in false } }, sending: [1, 2], expecting: []) }

    @Test("filter passes completion on when it rejected every value")
    func completion() {
        #expect(events(of: { $0.filter { _ in false } }, sending: [1, 2]) == [.completed])
    }

    @Test("filter stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.filter { _ in true } } }

    @Test("filter releases what its closure captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.filter { [token] in $0 > token.id } }
    }
}
