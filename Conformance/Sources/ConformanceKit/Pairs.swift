import OpenCombine
import Stillwater

/// One operator chain, written once for each library. Adding a pair is one entry in ``pairs``.
public struct Pair: Sendable {
    /// The operators, Stillwater's name first: `"take(3) / prefix(3)"`.
    public let name: String
    /// How many of the two inputs the chain reads (scripts only send into these).
    public let inputs: Int
    /// Whether scripts may send from inside the subscriber's observer (both libraries allow it here).
    public let reentrant: Bool
    /// A way OpenCombine's operator is known to differ from Stillwater's, if there is one.
    public let known: KnownDifference?
    let stillwater: @Sendable (Observable<Int>, Observable<Int>) -> Observable<Int>
    let openCombine: @Sendable (Input, Input) -> Input

    public init(
        _ name: String, inputs: Int = 1, reentrant: Bool = true, known: KnownDifference? = nil,
        stillwater: @escaping @Sendable (Observable<Int>, Observable<Int>) -> Observable<Int>,
        openCombine: @escaping @Sendable (Input, Input) -> Input
    ) {
        self.name = name
        self.inputs = inputs
        self.reentrant = reentrant
        self.known = known
        self.stillwater = stillwater
        self.openCombine = openCombine
    }
}

/// A documented way one OpenCombine operator behaves otherwise than Stillwater's (and than RxSwift's or
/// Apple Combine's): `expected` rewrites an OpenCombine log into what Stillwater sends instead, and a
/// script whose logs differ only by that rewrite is counted under ``Classification/knownDifference``.
///
/// Where the difference depends on events the subscriber never sees (a value a subject dropped for want
/// of demand, the other stream's failure), a log cannot be rewritten: the difference names instead a
/// `peer` chain, OpenCombine operators composed to behave as Stillwater's operator is documented to, and a
/// script counts as a known difference when Stillwater's log equals that chain's (reentrant sends queued).
public struct KnownDifference: Sendable {
    public let reason: String
    public let expected: @Sendable (Log) -> Log
    /// The OpenCombine chain Stillwater's log is compared with instead of the pair's own, if any.
    public let peer: (@Sendable (Input, Input) -> Input)?

    public init(_ reason: String, expected: @escaping @Sendable (Log) -> Log) {
        self.reason = reason
        self.expected = expected
        self.peer = nil
    }

    public init(_ reason: String, peer: @escaping @Sendable (Input, Input) -> Input) {
        self.reason = reason
        self.expected = { $0 }
        self.peer = peer
    }

    /// Two ways `element(at:)` and OpenCombine 0.14's `output(at:)` differ. When the source completes
    /// before the value at the index, Stillwater's fails with `ElementIndexOutOfRange` (RxSwift's rule)
    /// where `output(at:)` (and Combine's) finishes; the runners log an error that is not a `ScriptError`
    /// as `error(-1)`. And `output(at:)`, like 0.14's `prefix(n)`, finishes only at the next event after
    /// its value (Apple's Combine right after it), where `element(at:)` completes right after the value.
    public static let elementAt = KnownDifference(
        "element(at:) fails with ElementIndexOutOfRange where output(at:) finishes (source too short); OpenCombine 0.14's output(at:) finishes only at the next event after its value"
    ) { log in
        if let close = log.firstIndex(where: { $0.hasPrefix("/") }) { return Array(log[...close]) + ["done"] }
        return log == ["done"] ? ["error(-1)"] : log
    }

    /// Combine's `flatMap(maxPublishers: .max(n))` applies back-pressure: with n inner publishers
    /// running, it asks its upstream for no more values, and a `PassthroughSubject` drops what it is
    /// sent without demand. Stillwater's `flatMap(maxConcurrent:)` (RxSwift's `merge(maxConcurrent:)`)
    /// keeps those outer values waiting, in order, and maps each when an inner stream completes: the
    /// same as OpenCombine with an unbounded `buffer` in front of `flatMap`, which is the peer.
    public static func queuesOuterValues(
        _ count: Int, _ transform: @escaping @Sendable (Int, Input) -> Input
    ) -> KnownDifference {
        KnownDifference(
            "flatMap(maxPublishers: .max(\(count))) lets a subject drop the outer values sent while \(count) inner publishers run; Stillwater queues them (peer: buffer + flatMap)"
        ) { a, b in
            a.buffer(size: .max, prefetch: .byRequest, whenFull: .dropNewest)
                .flatMap(maxPublishers: .max(count)) { transform($0, b) }
                .eraseToAnyPublisher()
        }
    }

    /// OpenCombine's (and Combine's) `prefix(untilOutputFrom:)` ignores the other publisher's completion,
    /// failure too; Stillwater's `take(until:)` (RxSwift's) fails with the other stream's error. The peer
    /// composes RxSwift's rule: both inputs merged by `flatMap` (the other first), the other's value and
    /// the source's end turned into completion by `prefix(while:)`, the other's completion dropped.
    public static let failsWithTheOther = KnownDifference(
        "prefix(untilOutputFrom:) ignores the other publisher's failure; take(until:) fails with it"
    ) { a, b in
        let sides: [AnyPublisher<Side, ScriptError>] = [
            b.map { _ in Side.end }.append(Empty(completeImmediately: false)).eraseToAnyPublisher(),
            a.map(Side.value).append(Side.end).eraseToAnyPublisher(),
        ]
        return Publishers.Sequence(sequence: sides).flatMap { $0 }
            .prefix { if case .end = $0 { false } else { true } }
            .compactMap { if case .value(let value) = $0 { value } else { nil } }
            .eraseToAnyPublisher()
    }

    /// OpenCombine 0.14's `prefix(n)` sends `.finished` only when the value after the n-th arrives (or
    /// its upstream ends), where Stillwater's `take(n)` completes right after the n-th value.
    public static func finishesAfter(_ count: Int) -> KnownDifference {
        KnownDifference("OpenCombine 0.14's prefix(\(count)) finishes only at the next event after the \(count)th value") { log in
            var left = count
            for (index, entry) in log.enumerated() where entry.hasPrefix("/") {
                left -= 1
                if left == 0 { return Array(log[...index]) + ["done"] }
            }
            return log
        }
    }
}

/// An array as one value, for operators that send arrays: its count and its values, folded.
private func fold(_ values: [Int]) -> Int {
    values.reduce(values.count) { $0 &* 31 &+ $1 }
}

/// The inner stream of the bounded `flatMap` pairs: the other input (it completes only when that input
/// does, so the bound is reached) for most values, two values at once for every third.
private func innerStillwater(_ value: Int, _ other: Observable<Int>) -> Observable<Int> {
    value % 3 == 0 ? Observable.of(value * 10, value * 10 + 1) : other.map { value * 100 + $0 }
}

private func innerOpenCombine(_ value: Int, _ other: Input) -> Input {
    value % 3 == 0 ? just(value * 10, value * 10 + 1).eraseToAnyPublisher()
        : other.map { value * 100 + $0 }.eraseToAnyPublisher()
}

/// The value of a stream of `Never`, which has none.
private func absurd(_ never: Never) -> Int {}

/// A finite OpenCombine stream of `values` that fails like the inputs do.
private func just(_ values: Int...) -> Publishers.Sequence<[Int], ScriptError> {
    Publishers.Sequence(sequence: values)
}

/// Every operator pair that exists in both libraries, each in a chain over one or two inputs.
///
/// Not here: `combineLatest`, `sample`, `flatMapFirst`, `takeLast`, `pairwise` and `materialize` (no peer in
/// OpenCombine 0.14). README.md says why, and the known differences.
public let pairs: [Pair] = [
    Pair("map / map",
         stillwater: { a, _ in a.map { $0 * 2 } },
         openCombine: { a, _ in a.map { $0 * 2 }.eraseToAnyPublisher() }),
    Pair("filter / filter",
         stillwater: { a, _ in a.filter { $0 % 3 != 0 } },
         openCombine: { a, _ in a.filter { $0 % 3 != 0 }.eraseToAnyPublisher() }),
    Pair("compactMap / compactMap",
         stillwater: { a, _ in a.compactMap { $0 % 2 == 0 ? $0 / 2 : nil } },
         openCombine: { a, _ in a.compactMap { $0 % 2 == 0 ? $0 / 2 : nil }.eraseToAnyPublisher() }),
    Pair("scan / scan",
         stillwater: { a, _ in a.scan(0) { $0 + $1 } },
         openCombine: { a, _ in a.scan(0) { $0 + $1 }.eraseToAnyPublisher() }),
    Pair("distinctUntilChanged / removeDuplicates",
         stillwater: { a, _ in a.map { $0 % 4 }.distinctUntilChanged() },
         openCombine: { a, _ in a.map { $0 % 4 }.removeDuplicates().eraseToAnyPublisher() }),
    Pair("take(3) / prefix(3)", known: .finishesAfter(3),
         stillwater: { a, _ in a.take(3) },
         openCombine: { a, _ in a.prefix(3).eraseToAnyPublisher() }),
    Pair("skip(2) / dropFirst(2)",
         stillwater: { a, _ in a.skip(2) },
         openCombine: { a, _ in a.dropFirst(2).eraseToAnyPublisher() }),
    Pair("startWith / prepend",
         stillwater: { a, _ in a.startWith(-1, -2) },
         openCombine: { a, _ in a.prepend(-1, -2).eraseToAnyPublisher() }),
    // OpenCombine 0.14 has no `merge`: its peer is `flatMap` over the two inputs, which has merge's
    // semantics (all values as they come, completes when both have, fails when either does).
    Pair("merge / flatMap over both", inputs: 2,
         stillwater: { a, b in a.merge(with: b) },
         openCombine: { a, b in Publishers.Sequence(sequence: [a, b]).flatMap { $0 }.eraseToAnyPublisher() }),
    Pair("flatMapLatest / map + switchToLatest (inner: the other input)", inputs: 2,
         stillwater: { a, b in a.flatMapLatest { v in b.map { v * 100 + $0 } } },
         openCombine: { a, b in a.map { v in b.map { v * 100 + $0 } }.switchToLatest().eraseToAnyPublisher() }),
    Pair("flatMapLatest / map + switchToLatest (inner: two values)",
         stillwater: { a, _ in a.flatMapLatest { v in Observable.of(v * 10, v * 10 + 1) } },
         openCombine: { a, _ in a.map { v in just(v * 10, v * 10 + 1) }.switchToLatest().eraseToAnyPublisher() }),
    Pair("catch / catch (fallback: the other input)", inputs: 2,
         stillwater: { a, b in a.catch { _ in b } },
         openCombine: { a, b in a.catch { _ in b }.eraseToAnyPublisher() }),
    Pair("catch / catch (fallback: two values)",
         stillwater: { a, _ in a.catch { error in Observable.of(-1, -(error as! ScriptError).code) } },
         openCombine: { a, _ in a.catch { error in just(-1, -error.code) }.eraseToAnyPublisher() }),
    Pair("catchAndReturn / replaceError(with:)",
         stillwater: { a, _ in a.catchAndReturn(-9) },
         openCombine: { a, _ in a.replaceError(with: -9).setFailureType(to: ScriptError.self).eraseToAnyPublisher() }),
    Pair("retry(2) / retry(2)",
         stillwater: { a, _ in a.map { $0 + 1 }.retry(2) },
         openCombine: { a, _ in a.map { $0 + 1 }.retry(2).eraseToAnyPublisher() }),
    Pair("withLatestFrom / merge + scan + prefix(while:) (composed)", inputs: 2,
         stillwater: { a, b in a.withLatestFrom(b) { $0 * 100 + $1 } },
         openCombine: { a, b in withLatestFrom(a, b) { $0 * 100 + $1 } }),
    Pair("take(while:) / prefix(while:)",
         stillwater: { a, _ in a.take(while: { $0 < 15 }) },
         openCombine: { a, _ in a.prefix(while: { $0 < 15 }).eraseToAnyPublisher() }),
    Pair("skip(while:) / drop(while:)",
         stillwater: { a, _ in a.skip(while: { $0 < 12 }) },
         openCombine: { a, _ in a.drop(while: { $0 < 12 }).eraseToAnyPublisher() }),
    Pair("take(until:) / prefix(untilOutputFrom:)", inputs: 2, known: .failsWithTheOther,
         stillwater: { a, b in a.take(until: b) },
         openCombine: { a, b in a.prefix(untilOutputFrom: b).eraseToAnyPublisher() }),
    Pair("firstElement / first",
         stillwater: { a, _ in a.firstElement() },
         openCombine: { a, _ in a.first().eraseToAnyPublisher() }),
    Pair("lastElement / last",
         stillwater: { a, _ in a.lastElement() },
         openCombine: { a, _ in a.last().eraseToAnyPublisher() }),
    Pair("element(at: 2) / output(at: 2)", known: .elementAt,
         stillwater: { a, _ in a.element(at: 2) },
         openCombine: { a, _ in a.output(at: 2).eraseToAnyPublisher() }),
    Pair("ignoreElements / ignoreOutput",
         stillwater: { a, _ in a.ignoreElements().map(absurd) },
         openCombine: { a, _ in a.ignoreOutput().map(absurd).eraseToAnyPublisher() }),
    Pair("defaultIfEmpty / replaceEmpty(with:)",
         stillwater: { a, _ in a.defaultIfEmpty(-1) },
         openCombine: { a, _ in a.replaceEmpty(with: -1).eraseToAnyPublisher() }),
    Pair("reduce / reduce",
         stillwater: { a, _ in a.reduce(0) { $0 * 3 + $1 } },
         openCombine: { a, _ in a.reduce(0) { $0 * 3 + $1 }.eraseToAnyPublisher() }),
    Pair("toArray / collect()",
         stillwater: { a, _ in a.toArray().map(fold) },
         openCombine: { a, _ in a.collect().map(fold).eraseToAnyPublisher() }),
    Pair("buffer(count: 3) / collect(3)",
         stillwater: { a, _ in a.buffer(count: 3).map(fold) },
         openCombine: { a, _ in a.collect(3).map(fold).eraseToAnyPublisher() }),
    // No reentrant sends: OpenCombine 0.14's Zip asserts (Publishers.Zip.swift:502, in debug builds) when
    // a value arrives while it is delivering one, which a nested send is. Stillwater's own tests cover a
    // reentrant send into zip.
    Pair("zip / zip", inputs: 2, reentrant: false,
         stillwater: { a, b in Observable.zip(a, b).map { $0 * 100 + $1 } },
         openCombine: { a, b in a.zip(b).map { $0 * 100 + $1 }.eraseToAnyPublisher() }),
    Pair("concat / append", inputs: 2,
         stillwater: { a, b in a.concat(b) },
         openCombine: { a, b in a.append(b).eraseToAnyPublisher() }),
    Pair("flatMap / flatMap (inner: the other input or two values)", inputs: 2,
         stillwater: { a, b in a.flatMap { innerStillwater($0, b) } },
         openCombine: { a, b in a.flatMap { innerOpenCombine($0, b) }.eraseToAnyPublisher() }),
    Pair("flatMap(maxConcurrent: 2) / flatMap(maxPublishers: .max(2))", inputs: 2,
         known: .queuesOuterValues(2, innerOpenCombine),
         stillwater: { a, b in a.flatMap(maxConcurrent: 2) { innerStillwater($0, b) } },
         openCombine: { a, b in a.flatMap(maxPublishers: .max(2)) { innerOpenCombine($0, b) }.eraseToAnyPublisher() }),
    Pair("concatMap / flatMap(maxPublishers: .max(1))", inputs: 2,
         known: .queuesOuterValues(1, innerOpenCombine),
         stillwater: { a, b in a.concatMap { innerStillwater($0, b) } },
         openCombine: { a, b in a.flatMap(maxPublishers: .max(1)) { innerOpenCombine($0, b) }.eraseToAnyPublisher() }),
    Pair("do / handleEvents (what reaches the subscriber)",
         stillwater: { a, _ in
             a.do(onNext: { _ in }, onError: { _ in }, onCompleted: {}, onSubscribe: {}, onCancel: {}) },
         openCombine: { a, _ in
             a.handleEvents(receiveSubscription: { _ in }, receiveOutput: { _ in }, receiveCompletion: { _ in },
                            receiveCancel: {}, receiveRequest: { _ in }).eraseToAnyPublisher() }),
]

/// `withLatestFrom` as an OpenCombine user composes it without `combineLatest` (0.14 has none): both
/// inputs merged by `flatMap` (the other input subscribed first, as RxSwift and Stillwater do), the
/// primary's end marked by a value appended to it and turned into completion by `prefix(while:)`,
/// and the latest value of the other input kept by `scan`.
private func withLatestFrom(_ primary: Input, _ other: Input, _ combine: @escaping (Int, Int) -> Int) -> Input {
    let sides: [AnyPublisher<Side, ScriptError>] = [
        other.map(Side.latest).eraseToAnyPublisher(),
        primary.map(Side.value).append(Side.end).eraseToAnyPublisher(),
    ]
    return Publishers.Sequence(sequence: sides).flatMap { $0 }
        .prefix { if case .end = $0 { false } else { true } }
        .scan((latest: Int?.none, out: Int?.none)) { state, side in
            switch side {
            case .latest(let value): (value, nil)
            case .value(let value): (state.latest, state.latest.map { combine(value, $0) })
            case .end: (state.latest, nil)
            }
        }
        .compactMap(\.out)
        .eraseToAnyPublisher()
}

/// What the composed `withLatestFrom` merges: a value of the other input, of the primary, or the
/// primary's end.
private enum Side {
    case latest(Int)
    case value(Int)
    case end
}
