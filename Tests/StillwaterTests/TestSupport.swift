import Synchronization
import Testing
@testable import Stillwater

/// An object whose lifetime the tests watch through weak references.
final class Token: @unchecked Sendable {
    let id: Int
    init(_ id: Int = 0) { self.id = id }
}

/// The error the tests make streams fail with.
struct TestError: Error, Equatable, CustomStringConvertible {
    var code = 1
    var description: String { "TestError(\(code))" }
}

/// A mutable reference that closures of different isolation can share. Tests use it where the library
/// itself guarantees exclusive access (one delivery at a time), so it has no lock on purpose.
final class Shared<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Detects an observer that is entered while it is already running.
final class OverlapDetector: Sendable {
    private let inside = Atomic<Bool>(false)
    private let overlapCount = Atomic<Int>(0)

    /// Runs `body`, counting an overlap when another call is still inside.
    func enter(_ body: () -> Void) {
        if inside.exchange(true, ordering: .acquiringAndReleasing) {
            overlapCount.add(1, ordering: .relaxed)
            body()
            return
        }
        body()
        inside.store(false, ordering: .releasing)
    }

    var overlaps: Int { overlapCount.load(ordering: .relaxed) }
}

/// Records the spread of stack addresses seen across calls.
struct StackSpread {
    private(set) var lowest = UInt.max
    private(set) var highest = UInt.min
    private(set) var samples = 0

    mutating func sample() {
        var local = 0
        let address = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }
        lowest = min(lowest, address)
        highest = max(highest, address)
        samples += 1
    }

    var spread: UInt { samples == 0 ? 0 : highest - lowest }
}

/// How a test ends a subscription in the lifetime scenarios.
enum Ending: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case cancel, complete, fail, release
    var testDescription: String { rawValue }
}

/// Feeds `input` into `op` through a subject, then ends it as `end` says, and returns what came out.
func events<Output>(
    of op: (Observable<Int>) -> Observable<Output>,
    sending input: [Int],
    then end: Event<Int>? = .completed
) -> [Event<Output>] {
    let subject = PublishSubject<Int>()
    let recorded = Shared<[Event<Output>]>([])
    let subscription = op(subject.asObservable()).subscribe { recorded.value.append($0) }
    for value in input { subject.send(value) }
    switch end {
    case .completed?: subject.complete()
    case .error(let error)?: subject.fail(error)
    case .next?, nil: break
    }
    withExtendedLifetime(subscription) {}
    return recorded.value
}

/// The values an operator sends for `input` followed by completion.
func values<Output>(of op: (Observable<Int>) -> Observable<Output>, sending input: [Int]) -> [Output] {
    events(of: op, sending: input).compactMap(\.value)
}

/// Checks that an operator passes `completed` through and sends nothing else for an empty source.
func expectCompletesWhenEmpty<Output>(
    _ op: (Observable<Int>) -> Observable<Output>, sourceLocation: SourceLocation = #_sourceLocation
) {
    let recorded = events(of: op, sending: [])
    #expect(recorded.count == 1, "expected only `completed`, got \(recorded)", sourceLocation: sourceLocation)
    #expect(recorded.last.map { if case .completed = $0 { true } else { false } } == true,
            sourceLocation: sourceLocation)
}

/// Checks that an operator passes the source's error through, after the values `expected`.
func expectForwardsError<Output: Equatable>(
    _ op: (Observable<Int>) -> Observable<Output>, sending input: [Int], expecting expected: [Output],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let recorded = events(of: op, sending: input, then: .error(TestError(code: 7)))
    #expect(recorded == expected.map(Event.next) + [.error(TestError(code: 7))], sourceLocation: sourceLocation)
}

/// Checks that an operator stops delivering when its subscription is cancelled in the middle of a stream.
func expectStopsWhenCancelled<Output>(
    _ op: (Observable<Int>) -> Observable<Output>, sourceLocation: SourceLocation = #_sourceLocation
) {
    let subject = PublishSubject<Int>()
    let count = Shared(0)
    let subscription = op(subject.asObservable()).subscribe { _ in count.value += 1 }
    subject.send(1)
    subject.send(2)
    let before = count.value
    #expect(before > 0, "the operator should deliver something for 1, 2", sourceLocation: sourceLocation)
    subscription.cancel()
    subject.send(3)
    subject.send(4)
    subject.complete()
    #expect(count.value == before, "nothing may arrive after cancel()", sourceLocation: sourceLocation)
}

/// Checks that every object captured by the chain `build` makes is freed when the subscription ends as
/// `ending` says, and not before. `build` must capture `token` in its closures.
func expectReleasesCaptures<Output>(
    _ ending: Ending,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ build: (Observable<Int>, Token) -> Observable<Output>
) {
    let subject = PublishSubject<Int>()
    var token: Token? = Token()
    weak let weakToken = token
    var subscription: Subscription? = build(subject.asObservable(), token!).subscribe { _ in }
    token = nil
    subject.send(1)
    subject.send(2)
    #expect(weakToken != nil, "the live chain must keep what it captured", sourceLocation: sourceLocation)
    switch ending {
    case .cancel: subscription?.cancel()
    case .complete: subject.complete()
    case .fail: subject.fail(TestError())
    case .release: subscription = nil
    }
    #expect(weakToken == nil, "the chain must release its captures after \(ending)", sourceLocation: sourceLocation)
    withExtendedLifetime(subscription) {}
}

/// A thread-safe counter for tests whose closures may run concurrently.
final class AtomicCounter: Sendable {
    private let storage = Atomic<Int>(0)
    func increment() { storage.add(1, ordering: .relaxed) }
    var value: Int { storage.load(ordering: .relaxed) }
}

/// The five hot sources, seen through one interface so the guarantees can be checked for each.
enum SourceKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case publishSubject, behaviorSubject, replaySubject, publishRelay, behaviorRelay
    var testDescription: String { rawValue }

    /// A fresh source. Replaying kinds start with (or replay) `initial`.
    func make(initial: Int = 0) -> SourceHarness {
        switch self {
        case .publishSubject:
            let subject = PublishSubject<Int>()
            return SourceHarness(source: subject.asObservable(), send: { subject.send($0) }, replayed: nil, current: nil)
        case .behaviorSubject:
            let subject = BehaviorSubject(initial)
            return SourceHarness(source: subject.asObservable(), send: { subject.send($0) }, replayed: initial,
                                 current: { subject.value })
        case .replaySubject:
            let subject = ReplaySubject<Int>(bufferSize: 1)
            subject.send(initial)
            return SourceHarness(source: subject.asObservable(), send: { subject.send($0) }, replayed: initial, current: nil)
        case .publishRelay:
            let relay = PublishRelay<Int>()
            return SourceHarness(source: relay.asObservable(), send: { relay.accept($0) }, replayed: nil, current: nil)
        case .behaviorRelay:
            let relay = BehaviorRelay(initial)
            return SourceHarness(source: relay.asObservable(), send: { relay.accept($0) }, replayed: initial,
                                 current: { relay.value })
        }
    }
}

/// A hot source and the function that feeds it.
struct SourceHarness: @unchecked Sendable {
    let source: Observable<Int>
    let send: @Sendable (Int) -> Void
    /// The value a new observer receives first, if the source replays one.
    let replayed: Int?
    /// Reads the current value, for the sources that have one.
    let current: (() -> Int)?
}

/// Waits up to `seconds` for `condition`, polling; returns whether it became true.
func eventually(within seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
