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
public struct KnownDifference: Sendable {
    public let reason: String
    public let expected: @Sendable (Log) -> Log

    public init(_ reason: String, expected: @escaping @Sendable (Log) -> Log) {
        self.reason = reason
        self.expected = expected
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

/// A finite OpenCombine stream of `values` that fails like the inputs do.
private func just(_ values: Int...) -> Publishers.Sequence<[Int], ScriptError> {
    Publishers.Sequence(sequence: values)
}

/// Every operator pair that exists in both libraries, each in a chain over one or two inputs.
///
/// Not here: `combineLatest` and `sample` (OpenCombine 0.14 has neither). README.md says why, and
/// lists the pairs to add.
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
