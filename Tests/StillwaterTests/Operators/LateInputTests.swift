import Testing
@testable import Stillwater
import StillwaterTesting

/// Operators of several inputs do not subscribe an input whose turn comes after another input already
/// ended the result while being subscribed: an endless synchronous source there would never return.
@Suite("inputs after the end", .timeLimit(.minutes(5)))
struct LateInputTests {
    static let endless = Observable.from(sequence(first: 1) { $0 + 1 })

    @Test("zip ends at an empty first source without subscribing the rest")
    func zip() {
        #expect(Recorder(Observable.zip(Observable<Int>.empty(), Self.endless)).events.count == 1)
    }

    @Test("combineLatest ends at a failing first source without subscribing the rest")
    func combineLatest() {
        let typed = Recorder(Observable.combineLatest(Observable<Int>.failure(TestError()), Self.endless))
        #expect(typed.events.count == 1)
        let array = Recorder(Observable.combineLatest([Observable<Int>.failure(TestError()), Self.endless]))
        #expect(array.events.count == 1)
    }

    @Test("withLatestFrom ends at a failing other stream without subscribing its source")
    func withLatestFrom() {
        let recorder = Recorder(Self.endless.withLatestFrom(Observable<Int>.failure(TestError(code: 2))))
        #expect(recorder.events == [.error(TestError(code: 2))])
    }
}
