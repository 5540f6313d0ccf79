import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("diffed")
struct DiffedTests {
    /// Feeds lists of ids through `diffed()` and returns what came out.
    func diffs(_ lists: [[Int]]) -> [ListDiff<Int>] {
        let subject = PublishSubject<[Int]>()
        let recorder = Recorder(subject.diffed())
        for list in lists { subject.send(list) }
        return recorder.values
    }

    @Test("the first array is diffed from empty: its changeset inserts everything")
    func first() {
        #expect(diffs([[3, 1, 2]]) == [ListDiff(old: [], new: [3, 1, 2], changeset: Changeset(inserts: [0, 1, 2]))])
        #expect(diffs([[]]) == [ListDiff(old: [], new: [], changeset: Changeset())])
    }

    @Test("each later array comes with the changeset from the one before")
    func successive() {
        let lists = [[1, 2, 3], [3, 1, 2, 4], [4], [4], [5, 4]]
        let received = diffs(lists)
        #expect(received.map(\.new) == lists)
        #expect(received.map(\.old) == [[]] + lists.dropLast())
        #expect(received.map(\.changeset) == zip([[]] + lists.dropLast(), lists).map { Changeset(from: $0, to: $1) })
        #expect(received[3].changeset.isEmpty)
    }

    @Test("applying every changeset in turn to an empty array follows the stream", arguments: Array(UInt64(1)...5))
    func follows(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let lists = (0..<20).map { _ in
            Array((0..<30).shuffled(using: &random).prefix(Int.random(in: 0...30, using: &random)))
        }
        var mirror: [Int] = []
        for diff in diffs(lists) {
            mirror.apply(diff.changeset) { diff.new[$0] }
            #expect(mirror == diff.new)
        }
    }

    @Test("isEqual decides which kept elements are updates")
    func customEquality() {
        let subject = PublishSubject<[DiffItem]>()
        let recorder = Recorder(subject.diffed(isEqual: { $0.value / 10 == $1.value / 10 }))
        subject.send([DiffItem(id: 1, value: 1), DiffItem(id: 2, value: 1)])
        subject.send([DiffItem(id: 1, value: 5), DiffItem(id: 2, value: 15)])
        #expect(recorder.values.map(\.changeset) == [Changeset(inserts: [0, 1]), Changeset(updates: [1])])
    }

    @Test("each subscription starts again from an empty array")
    func perSubscription() {
        let source = Observable.of([1, 2], [2]).diffed()
        let expected = [Changeset(inserts: [0, 1]), Changeset(deletes: [0])]
        #expect(Recorder(source).values.map(\.changeset) == expected)
        #expect(Recorder(source).values.map(\.changeset) == expected)
    }

    @Test("diffed completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.map { [$0] }.diffed() } }

    @Test("diffed passes the error on when the source fails")
    func error() {
        let recorded = events(
            of: { $0.map { [$0] }.diffed().map(\.changeset) }, sending: [1, 2], then: .error(TestError(code: 7))
        )
        #expect(recorded == [
            .next(Changeset(inserts: [0])), .next(Changeset(deletes: [0], inserts: [0])), .error(TestError(code: 7)),
        ])
    }

    @Test("diffed stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.map { [$0] }.diffed() } }

    @Test("diffed releases the chain when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in [$0 + token.id] }.diffed() }
    }
}
