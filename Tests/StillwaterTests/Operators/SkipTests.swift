import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("skip")
struct SkipTests {
    @Test("skip drops the first count values", arguments: [0, 1, 2, 5, 10])
    func dropsFirst(count: Int) {
        #expect(values(of: { $0.skip(count) }, sending: Array(1...5)) == Array(Array(1...5).dropFirst(count)))
    }

    @Test("each subscription skips on its own")
    func perSubscription() {
        let source = Observable.of(1, 2, 3).skip(1)
        #expect(Recorder(source).values == [2, 3])
        #expect(Recorder(source).values == [2, 3])
    }

    @Test("skip completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.skip(2) } }

    @Test("skip passes the error on even while it is still skipping")
    func error() { expectForwardsError({ $0.skip(5) }, sending: [1, 2], expecting: []) }

    @Test("skip completes when the source completes")
    func completion() {
        #expect(events(of: { $0.skip(1) }, sending: [1, 2]) == [.next(2), .completed])
    }

    @Test("skip stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.skip(1) } }

    @Test("skip releases the chain when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.map { [token] in $0 + token.id }.skip(1) }
    }

    @Test("skip with a negative count stops the process with a message naming the argument")
    func negativeCount() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PublishSubject<Int>().skip(-1)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("skip(_:)") && message.contains("count"), "message: \(message)")
        #endif
    }
}
