import Testing
@testable import Stillwater
import StillwaterTesting

/// The time operators, each applied on a virtual clock, so the shared guarantees can be checked for each.
enum TimeOperator: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case debounce, throttle, delay, timeout, observeOn, subscribeOn
    var testDescription: String { rawValue }

    func apply(to source: Observable<Int>, on scheduler: some Scheduler) -> Observable<Int> {
        switch self {
        case .debounce: source.debounce(for: .seconds(1), scheduler: scheduler)
        case .throttle: source.throttle(for: .seconds(1), scheduler: scheduler)
        case .delay: source.delay(for: .seconds(1), scheduler: scheduler)
        case .timeout: source.timeout(.seconds(10), scheduler: scheduler)
        case .observeOn: source.observe(on: scheduler)
        case .subscribeOn: source.subscribe(on: scheduler)
        }
    }

    /// `subscribe(on:)` cancels its upstream subscription on the scheduler, so that cancel is itself a
    /// piece of scheduled work until the clock moves.
    var workLeftByCancel: Int { self == .subscribeOn ? 1 : 0 }
}

/// Records what `pipeline` sends on `scheduler`'s virtual clock, given the hot diagram `source`, and
/// checks the result against `expected`.
func expectMarbles(
    _ source: String, _ pipeline: (Observable<Int>, TestScheduler) -> Observable<Int>, _ expected: String,
    values: [Character: Int] = ["a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let scheduler = TestScheduler()
    let input = scheduler.hot(source, values: values, error: TestError())
    let recorder = Recorder(pipeline(input.asObservable(), scheduler), scheduler: scheduler)
    scheduler.run()
    recorder.expect(expected, values: values, error: TestError(), sourceLocation: sourceLocation)
}
