import Testing
import Stillwater
import StillwaterTesting

/// The examples of the "Testing your pipelines" article (StillwaterTesting.docc), kept here so they are known to pass.
/// Only the public API is imported.
@Suite("Testing your pipelines (article)")
struct ReadmeSearchTests {
    @Test("a debounced search queries only when typing pauses")
    func debouncedSearch() {
        let scheduler = TestScheduler(frame: .milliseconds(100))      // one marble character = 100 ms
        let typed = scheduler.hot("-a-b-c------d-e------|",
                                  values: ["a": "s", "b": "sw", "c": "swi", "d": "swif", "e": "swift"])

        let searches = typed
            .debounce(for: .milliseconds(300), scheduler: scheduler)
            .distinctUntilChanged()

        let recorder = Recorder(searches, scheduler: scheduler)
        scheduler.run()

        recorder.expect("--------c--------e---|", values: ["c": "swi", "e": "swift"])
    }

    @Test("stepping the clock by hand")
    func steppingTheClock() {
        let scheduler = TestScheduler()
        let query = PublishSubject<String>()
        let recorder = Recorder(query.debounce(for: .milliseconds(300), scheduler: scheduler), scheduler: scheduler)

        query.send("swift")
        scheduler.advance(by: .milliseconds(299))
        #expect(recorder.values == [])
        scheduler.advance(by: .milliseconds(1))
        #expect(recorder.timeline == [.next(.milliseconds(300), "swift")])
    }

    @Test("a wrong expectation is reported with expected and actual side by side")
    func failureMessage() {
        let scheduler = TestScheduler(frame: .milliseconds(100))
        let typed = scheduler.hot("-a-b-c---|", values: ["a": "s", "b": "sw", "c": "swi"])
        let recorder = Recorder(typed.debounce(for: .milliseconds(300), scheduler: scheduler), scheduler: scheduler)
        scheduler.run()
        let comparison = recorder.compare("-------c-|", values: ["c": "swi"])
        #expect(!comparison.isMatch)
        #expect(comparison.description == """
            marbles differ (one frame = 100 ms)
              expected: -------c-|
              actual:   --------c|
                  expected              actual
              ✗ 1 700 ms   next("swi")  800 ms   next("swi")
                2 900 ms   completed    900 ms   completed
            """)
    }
}
