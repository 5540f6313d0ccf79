import Testing
@testable import Stillwater

/// A subject seen through a stream that records whether its subscription was cancelled, for the
/// operators that end before their source does.
struct WatchedSubject {
    let subject = PublishSubject<Int>()
    let cancelled = Shared(false)

    var stream: Observable<Int> {
        Observable<Int> { [subject, cancelled] observer in
            let inner = subject.subscribe(observer)
            return Subscription {
                cancelled.value = true
                inner.cancel()
            }
        }
    }
}

/// Checks that an operator passes on, after the current event, a value its observer sends to the source.
func expectQueuesReentrantSends<Output: Equatable>(
    _ op: (Observable<Int>) -> Observable<Output>, sending first: Int, expecting expected: [Output],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let subject = PublishSubject<Int>()
    let received = Shared<[String]>([])
    let depth = Shared(0)
    let subscription = op(subject.asObservable()).observe { value in
        received.value.append("\(value)")
        depth.value += 1
        if depth.value < 8 { subject.send(first + depth.value) }
        received.value.append("end \(value)")
    }
    subject.send(first)
    subject.complete()
    let pairs = expected.flatMap { ["\($0)", "end \($0)"] }
    #expect(received.value == pairs, sourceLocation: sourceLocation)
    withExtendedLifetime(subscription) {}
}

/// Checks that an operator that sends at the end (`lastElement`, `takeLast`, `toArray`) delivers each of
/// `expected` and then the completion one at a time, when its observer sends to the source meanwhile.
func expectSendsAtEndUnnested<Output>(
    _ op: (Observable<Int>) -> Observable<Output>, sending input: [Int], expecting expected: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let subject = PublishSubject<Int>()
    let received = Shared<[String]>([])
    let subscription = op(subject.asObservable()).subscribe(
        onNext: { value in
            received.value.append("\(value)")
            subject.send(99)
            received.value.append("end")
        },
        onCompleted: { received.value.append("done") }
    )
    for value in input { subject.send(value) }
    subject.complete()
    #expect(received.value == expected.flatMap { [$0, "end"] } + ["done"], sourceLocation: sourceLocation)
    withExtendedLifetime(subscription) {}
}

/// Checks that the chain `build` makes keeps what it captured until the last of `input` ends it early,
/// and releases it then. `build` must capture `token` in its closures.
func expectReleasesWhenEndingEarly<Output>(
    sending input: [Int], sourceLocation: SourceLocation = #_sourceLocation,
    _ build: (Observable<Int>, Token) -> Observable<Output>
) {
    let subject = PublishSubject<Int>()
    var token: Token? = Token()
    weak let weakToken = token
    let subscription = build(subject.asObservable(), token!).subscribe { _ in }
    token = nil
    for value in input.dropLast() { subject.send(value) }
    #expect(weakToken != nil, "the live chain must keep what it captured", sourceLocation: sourceLocation)
    if let last = input.last { subject.send(last) }
    #expect(weakToken == nil, "the chain must release its captures once it ended", sourceLocation: sourceLocation)
    withExtendedLifetime(subscription) {}
}

/// Checks that an operator that holds values until the end (`takeLast`, `toArray`) lets go of them once
/// it sent them.
func expectReleasesHeldValues<Output>(
    _ op: (Observable<Token>) -> Observable<Output>, sourceLocation: SourceLocation = #_sourceLocation
) {
    let subject = PublishSubject<Token>()
    var token: Token? = Token()
    weak let weakToken = token
    let subscription = op(subject.asObservable()).subscribe { _ in }
    subject.send(token!)
    token = nil
    #expect(weakToken != nil, "the operator must hold the value until the end", sourceLocation: sourceLocation)
    subject.complete()
    #expect(weakToken == nil, "the operator must let go of the value once sent", sourceLocation: sourceLocation)
    withExtendedLifetime(subscription) {}
}
