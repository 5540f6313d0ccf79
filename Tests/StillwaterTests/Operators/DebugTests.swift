import Testing
@testable import Stillwater

@Suite("debug")
struct DebugTests {
    @Test("debug prints subscribe, each value, completion and cancellation, with its label")
    func linesForLifecycle() {
        let lines = Shared<[String]>([])
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        let subscription = subject.debug("numbers", printer: { lines.value.append($0) })
            .observe { seen.value.append($0) }
        subject.send(1)
        subject.send(2)
        subscription.cancel()
        subject.send(3)
        #expect(lines.value == ["numbers: subscribed", "numbers: next(1)", "numbers: next(2)", "numbers: cancelled"])
        #expect(seen.value == [1, 2])
    }

    @Test("debug prints the terminal event", arguments: [true, false])
    func terminalLine(fails: Bool) {
        let lines = Shared<[String]>([])
        let recorded = events(of: { $0.debug("s", printer: { lines.value.append($0) }) },
                              sending: [1], then: fails ? .error(TestError(code: 2)) : .completed)
        let terminal = fails ? "s: error(TestError(2))" : "s: completed"
        #expect(Array(lines.value.prefix(3)) == ["s: subscribed", "s: next(1)", terminal])
        #expect(recorded == [.next(1), fails ? .error(TestError(code: 2)) : .completed])
    }

    @Test("the printer is called at the same stack depth for every event, however many came before")
    func printerDepthStaysFlat() {
        // A closure kept directly as a lock's state is re-wrapped each time it is read and written back
        // through the lock, so every call would go through one more layer than the last.
        var spread = StackSpread()
        let subject = PublishSubject<Int>()
        let subscription = subject.debug("d", printer: { _ in spread.sample() }).observe { _ in }
        for value in 0..<2_000 { subject.send(value) }
        subscription.cancel()
        #expect(spread.samples == 2_002)
        #expect(spread.spread < 4096)
    }

    @Test("debug completes without values when the source is empty")
    func empty() { expectCompletesWhenEmpty { $0.debug("e", printer: { _ in }) } }

    @Test("debug passes the error on when the source fails")
    func error() { expectForwardsError({ $0.debug("e", printer: { _ in }) }, sending: [1], expecting: [1]) }

    @Test("debug stops when cancelled mid-stream")
    func cancel() { expectStopsWhenCancelled { $0.debug("c", printer: { _ in }) } }

    @Test("debug releases its printer when the subscription ends", arguments: Ending.allCases)
    func releases(ending: Ending) {
        expectReleasesCaptures(ending) { source, token in source.debug("r", printer: { [token] _ in _ = token }) }
    }
}
