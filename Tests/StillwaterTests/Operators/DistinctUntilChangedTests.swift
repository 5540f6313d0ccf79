import Testing
@testable import Stillwater

@Suite("distinctUntilChanged")
struct DistinctUntilChangedTests {
    struct Reading: Equatable { var id: Int; var seen: Int }

    static let cases: [([Int], [Int])] = [
        ([], []),
        ([1], [1]),
        ([1, 1, 2, 2, 1], [1, 2, 1]),
        ([3, 3, 3], [3]),
        ([1, 2, 3], [1, 2, 3]),
    ]

    @Test("the Equatable form drops each value equal to the one before", arguments: cases)
    func equatable(input: [Int], expected: [Int]) {
        #expect(values(of: { $0.distinctUntilChanged() }, sending: input) == expected)
    }

    @Test("the by: form drops a value when the rule says it equals the one before")
    func byRule() {
        let words = PublishSubject<String>()
        let seen = Shared<[String]>([])
        let subscription = words
            .distinctUntilChanged(by: { $0.lowercased() == $1.lowercased() })
            .observe { seen.value.append($0) }
        for word in ["Hi", "hi", "HI", "Bye", "hi"] { words.send(word) }
        #expect(seen.value == ["Hi", "Bye", "hi"])
        withExtendedLifetime(subscription) {}
    }

    @Test("the by: form compares with the last value passed, not with the last value seen")
    func byComparesWithPrevious() {
        // |a - b| <= 1 counts as equal: 2 is dropped (equal to 1); 3 is compared with 1, the last value that
        // passed, so it passes; 4 is equal to 3 and dropped.
        let result = values(of: { $0.distinctUntilChanged(by: { abs($0 - $1) <= 1 }) }, sending: [1, 2, 3, 4, 6])
        #expect(result == [1, 3, 6])
    }

    @Test("the key path form drops a value whose key equals the previous one's")
    func keyPath() {
        let readings = PublishSubject<Reading>()
        let seen = Shared<[Int]>([])
        let subscription = readings.distinctUntilChanged(\.id).observe { seen.value.append($0.id) }
        readings.send(Reading(id: 1, seen: 0))
        readings.send(Reading(id: 1, seen: 5))
        readings.send(Reading(id: 2, seen: 5))
        readings.send(Reading(id: 1, seen: 5))
        #expect(seen.value == [1, 2, 1])
        withExtendedLifetime(subscription) {}
    }

    @Test("the first value always passes, in every form",
          arguments: ["equatable", "by", "keyPath"])
    func firstPasses(form: String) {
        let op: (Observable<Int>) -> Observable<Int> = switch form {
        case "equatable": { $0.distinctUntilChanged() }
        case "by": { $0.distinctUntilChanged(by: { _, _ in true }) }
        default: { $0.distinctUntilChanged(\.self) }
        }
        #expect(values(of: op, sending: [4, 4, 5]) == (form == "by" ? [4] : [4, 5]))
    }

    @Test("each subscription keeps its own previous value")
    func perSubscription() {
        let subject = PublishSubject<Int>()
        let distinct = subject.distinctUntilChanged()
        let first = Shared<[Int]>([])
        let a = distinct.observe { first.value.append($0) }
        subject.send(1)
        let second = Shared<[Int]>([])
        let b = distinct.observe { second.value.append($0) }
        subject.send(1)
        subject.send(2)
        #expect(first.value == [1, 2])
        #expect(second.value == [1, 2])
        withExtendedLifetime((a, b)) {}
    }

    @Test("distinctUntilChanged completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.distinctUntilChanged() } }

    @Test("distinctUntilChanged passes the error on when the source fails")
    func error() { expectForwardsError({ $0.distinctUntilChanged() }, sending: [1, 1, 2], expecting: [1, 2]) }

    @Test("distinctUntilChanged completes when the source completes")
    func completion() {
        #expect(events(of: { $0.distinctUntilChanged() }, sending: [1, 1]) == [.next(1), .completed])
    }

    @Test("distinctUntilChanged stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.distinctUntilChanged() } }

    @Test("the by: form releases what its rule captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.distinctUntilChanged(by: { [token] in $0 == $1 && token.id == 0 })
        }
    }
}
