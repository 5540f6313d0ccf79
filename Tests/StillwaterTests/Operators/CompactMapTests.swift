import Testing
@testable import Stillwater

@Suite("compactMap")
struct CompactMapTests {
    @Test("compactMap passes the results that are not nil", arguments: [[], [1, 2, 3, 4], [3, 5]])
    func dropsNil(input: [Int]) {
        let half: (Int) -> Int? = { $0.isMultiple(of: 2) ? $0 / 2 : nil }
        #expect(values(of: { $0.compactMap(half) }, sending: input) == input.compactMap(half))
    }

    @Test("compactMap parses strings, dropping those that do not parse")
    func parses() {
        let subject = PublishSubject<String>()
        let seen = Shared<[Int]>([])
        let subscription = subject.compactMap { Int($0) }.observe { seen.value.append($0) }
        for text in ["12", "twelve", "7"] { subject.send(text) }
        #expect(seen.value == [12, 7])
        withExtendedLifetime(subscription) {}
    }

    @Test("compactMap completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.compactMap { $0 } } }

    @Test("compactMap passes the error on when the source fails")
    func error() {
        expectForwardsError({ $0.compactMap { $0 > 1 ? $0 : nil } }, sending: [1, 2], expecting: [2])
    }

    @Test("compactMap completes when the source completes")
    func completion() {
        #expect(events(of: { $0.compactMap { _ in Int?.none } }, sending: [1]) == [.completed])
    }

    @Test("compactMap stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.compactMap { $0 } } }

    @Test("compactMap releases what its closure captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.compactMap { [token] in $0 + token.id } }
    }
}
