import Testing
@testable import Stillwater

@Suite("map")
struct MapTests {
    @Test("map transforms each value in order", arguments: [[], [1], [1, 2, 3], [-4, 0, 4]])
    func transformsValues(input: [Int]) {
        #expect(values(of: { $0.map { "\($0 * 2)" } }, sending: input) == input.map { "\($0 * 2)" })
    }

    @Test("map by key path reads the property of each value")
    func keyPath() {
        struct User { var name: String; var age: Int }
        let subject = PublishSubject<User>()
        let names = Shared<[String]>([])
        let subscription = subject.map(\.name).observe { names.value.append($0) }
        subject.send(User(name: "Ada", age: 36))
        subject.send(User(name: "Grace", age: 45))
        #expect(names.value == ["Ada", "Grace"])
        withExtendedLifetime(subscription) {}
    }

    @Test("map completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.map { $0 + 1 } } }

    @Test("map passes the error on when the source fails")
    func error() { expectForwardsError({ $0.map { $0 + 1 } }, sending: [1, 2], expecting: [2, 3]) }

    @Test("map completes when the source completes")
    func completion() {
        #expect(events(of: { $0.map { $0 * 3 } }, sending: [1]) == [.next(3), .completed])
    }

    @Test("map stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.map { $0 } } }

    @Test("map releases what its closure captured when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id } }
    }

    @Test("map by key path releases the chain when the subscription ends", arguments: Ending.allCases)
    func keyPathReleases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in
            source.map { [token] in ($0, token) }.map(\.0)
        }
    }
}
