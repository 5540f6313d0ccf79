import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Marbles")
struct MarbleTests {
    private let table: [Character: Int] = ["a": 1, "b": 2, "c": 3]

    @Test("each character is one frame; values, completion and failure land on their frames")
    func frames() {
        let scheduler = TestScheduler(frame: .milliseconds(10))
        let timeline = scheduler.timeline("-a--b|", values: table)
        #expect(timeline == [.next(.milliseconds(10), 1), .next(.milliseconds(40), 2), .completed(.milliseconds(50))])
        let failing = scheduler.timeline("--#", values: table, error: TestError(code: 3))
        #expect(failing == [.error(.milliseconds(20), TestError(code: 3))])
    }

    @Test("a group puts its events in the frame of its '(' and still counts each character as a frame")
    func groups() {
        let scheduler = TestScheduler()
        let timeline = scheduler.timeline("-(ab)-c|", values: table)
        #expect(timeline == [.next(.milliseconds(1), 1), .next(.milliseconds(1), 2),
                             .next(.milliseconds(6), 3), .completed(.milliseconds(7))])
    }

    @Test("spaces are ignored, so diagrams can be aligned")
    func spaces() {
        let scheduler = TestScheduler()
        #expect(scheduler.timeline(" - a  - b | ", values: table) == scheduler.timeline("-a-b|", values: table))
    }

    @Test("a hot source sends its events at their times to whoever listens, from creation on")
    func hot() {
        let scheduler = TestScheduler()
        let source = scheduler.hot("-a-b-c|", values: table)
        scheduler.advance(to: .milliseconds(2))
        let recorder = Recorder(source, scheduler: scheduler)
        scheduler.run()
        #expect(recorder.timeline == [.next(.milliseconds(3), 2), .next(.milliseconds(5), 3),
                                      .completed(.milliseconds(6))])
        #expect(source.subscriptions == [.init(subscribed: .milliseconds(2))])
    }

    @Test("a hot source's '^' is frame zero; events before it are in the past and never sent")
    func hotStartMarker() {
        let scheduler = TestScheduler()
        let source = scheduler.hot("a-^-b|", values: table)
        let recorder = Recorder(source, scheduler: scheduler)
        scheduler.run()
        #expect(recorder.timeline == [.next(.milliseconds(2), 2), .completed(.milliseconds(3))])
    }

    @Test("a cold source starts its diagram for each subscriber when it subscribes")
    func cold() {
        let scheduler = TestScheduler()
        let source = scheduler.cold("-a|", values: table)
        let first = Recorder(source, scheduler: scheduler)
        scheduler.advance(to: .milliseconds(5))
        let second = Recorder(source, scheduler: scheduler)
        scheduler.run()
        #expect(first.timeline == [.next(.milliseconds(1), 1), .completed(.milliseconds(2))])
        #expect(second.timeline == [.next(.milliseconds(6), 1), .completed(.milliseconds(7))])
        #expect(source.subscriptions == [.init(subscribed: .zero), .init(subscribed: .milliseconds(5))])
    }

    @Test("cancelling a cold subscription cancels the events it had left and records when")
    func coldCancel() {
        let scheduler = TestScheduler()
        let source = scheduler.cold("-a-b-c|", values: table)
        let recorder = Recorder(source, scheduler: scheduler)
        scheduler.advance(to: .milliseconds(2))
        recorder.cancel()
        #expect(scheduler.pendingWorkCount == 0)
        scheduler.run()
        #expect(recorder.values == [1])
        #expect(source.subscriptions == [.init(subscribed: .zero, cancelled: .milliseconds(2))])
    }

    @Test("an operator that cancels its source shows in the source's subscriptions")
    func subscriptionPeriods() {
        let scheduler = TestScheduler()
        let source = scheduler.cold("-a-b|")
        let recorder = Recorder(source.take(1), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.values == ["a"])
        #expect(source.subscriptions == [.init(subscribed: .zero, cancelled: .milliseconds(1))])
        #expect("\(source.subscriptions)" == "[0 ms ..< 1 ms]")
        #expect(TestSource<Int>.Period(subscribed: .seconds(1)).description == "1000 ms ...")
    }

    @Test("string sources use each character as its own value")
    func selfNamed() {
        let scheduler = TestScheduler()
        let recorder = Recorder(scheduler.cold("-x(yz)|"), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.values == ["x", "y", "z"])
        recorder.expect("-x(yz)|")
    }

    @Test("a recording is drawn back as the diagram it matches, groups included")
    func drawing() {
        let scheduler = TestScheduler()
        let diagram = "-a--(bc)-a|"
        let recorder = Recorder(scheduler.cold(diagram, values: table), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.marbles(values: table) == diagram)
        #expect(recorder.compare(diagram, values: table).isMatch)
    }

    @Test("a value missing from the table is drawn as '?'")
    func unknownValue() {
        let scheduler = TestScheduler()
        let recorder = Recorder(scheduler.cold("-a-b|", values: table), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.marbles(values: ["a": 1]) == "-a-?|")
    }

    @Test("a mismatch shows both diagrams and the events side by side, marking the rows that differ")
    func mismatchDescription() {
        let scheduler = TestScheduler(frame: .milliseconds(100))
        let recorder = Recorder(scheduler.cold("---a--b|", values: table), scheduler: scheduler)
        scheduler.run()
        let comparison = recorder.compare("---a-b|", values: table)
        #expect(!comparison.isMatch)
        let lines = comparison.description.split(separator: "\n").map(String.init)
        #expect(lines[0] == "marbles differ (one frame = 100 ms)")
        #expect(lines[1] == "  expected: ---a-b|")
        #expect(lines[2] == "  actual:   ---a--b|")
        #expect(lines[3] == "      expected            actual")
        #expect(lines[4] == "    1 300 ms   next(1)    300 ms   next(1)")
        #expect(lines[5] == "  ✗ 2 500 ms   next(2)    600 ms   next(2)")
        #expect(lines[6] == "  ✗ 3 600 ms   completed  700 ms   completed")
    }

    @Test("a missing event shows as a dash on its side")
    func missingRow() {
        let scheduler = TestScheduler()
        let recorder = Recorder(scheduler.cold("-a", values: table), scheduler: scheduler)
        scheduler.run()
        let lines = recorder.compare("-a|", values: table).description.split(separator: "\n")
        #expect(lines.last?.hasPrefix("  ✗ 2 2 ms") == true)
        #expect(lines.last?.hasSuffix("completed  —") == true)
    }

    @Test("expect records an issue carrying the side-by-side description when the marbles differ")
    func expectRecordsIssue() {
        let scheduler = TestScheduler()
        let recorder = Recorder(scheduler.cold("-a|", values: table), scheduler: scheduler)
        scheduler.run()
        withKnownIssue {
            recorder.expect("--a|", values: table)
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("expected: --a|") && text.contains("actual:   -a|")
        }
    }

    @Test("errors match by type and description")
    func errorsCompare() {
        let scheduler = TestScheduler()
        let recorder = Recorder(scheduler.cold("-#", values: table, error: TestError(code: 2)), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.compare("-#", values: table, error: TestError(code: 2)).isMatch)
        #expect(!recorder.compare("-#", values: table, error: TestError(code: 3)).isMatch)
        #expect(!recorder.compare("-#", values: table).isMatch)
    }

    @Test("times between frames are drawn in their frame and flagged in the description")
    func offFrameTimes() {
        let scheduler = TestScheduler(frame: .milliseconds(10))
        let subject = PublishSubject<Int>()
        let recorder = Recorder(subject, scheduler: scheduler)
        scheduler.advance(to: .milliseconds(25))
        subject.send(1)
        #expect(recorder.marbles(values: table) == "--a")
        let comparison = recorder.compare("--a", values: table)
        #expect(!comparison.isMatch)
        #expect(comparison.description.contains("times between frames"))
    }

    @Test("malformed marbles stop the program with a message naming the fix", arguments: [
        "missing value", "after the end", "nested group", "unclosed group", "stray parenthesis", "caret in cold",
    ])
    func malformed(_ kind: String) async {
        // Exit tests cannot capture `kind`, so each case is its own body.
        switch kind {
        case "missing value":
            await #expect(processExitsWith: .failure) { _ = TestScheduler().timeline("-x|", values: ["a": 1]) }
        case "after the end":
            await #expect(processExitsWith: .failure) { _ = TestScheduler().timeline("-|a", values: ["a": 1]) }
        case "nested group":
            await #expect(processExitsWith: .failure) { _ = TestScheduler().timeline("((a))", values: ["a": 1]) }
        case "unclosed group":
            await #expect(processExitsWith: .failure) { _ = TestScheduler().timeline("(a", values: ["a": 1]) }
        case "stray parenthesis":
            await #expect(processExitsWith: .failure) { _ = TestScheduler().timeline("a)", values: ["a": 1]) }
        default:
            await #expect(processExitsWith: .failure) { _ = TestScheduler().cold("^a", values: ["a": 1]) }
        }
    }

    @Test("marble methods on a recorder without a scheduler stop the program with a message")
    func recorderWithoutScheduler() async {
        await #expect(processExitsWith: .failure) {
            let recorder = Recorder(Observable.just(1))
            _ = recorder.marbles(values: ["a": 1])
        }
    }

    @Test("the example of the StillwaterTesting landing page: a delay of two frames moves every event two frames")
    func landingPageExample() {
        let scheduler = TestScheduler(frame: .milliseconds(100))
        let source = scheduler.cold("-a-b|", values: ["a": 1, "b": 2])
        let recorder = Recorder(source.delay(for: .milliseconds(200), scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(recorder.compare("---a-b|", values: ["a": 1, "b": 2]).isMatch)
        #expect(!recorder.compare("-a-b|", values: ["a": 1, "b": 2]).isMatch)
    }
}
