/// A source that never fails: relays, properties, action handles and ``Infallible`` streams.
///
/// The fact survives the operators that cannot fail (`map`, `filter`, `compactMap`, `scan`,
/// `distinctUntilChanged`, `startWith`, `skip`, `take`, `take(while:)`, `skip(while:)`, `take(until:)` of
/// another infallible stream, `takeLast`, `firstElement`, `lastElement`, `ignoreElements`,
/// `defaultIfEmpty`, `pairwise`, `buffer(count:)`, `reduce`, `toArray`, and `do` without `onError`):
/// on these sources they return an ``Infallible``,
/// whose ``values`` a `for await` loop reads without `try`. Where a plain ``Observable`` is wanted, say so
/// (`let stream: Observable<Int> = relay.map { $0 }`) or call `asObservable()`.
public protocol InfallibleType<Value>: ObservableType {}

/// A stream that never fails: it sends values, and at most a completion.
///
/// Made by the operators of an ``InfallibleType`` source, or by ``InfallibleType/asInfallible()``.
///
/// ```swift
/// let relay = PublishRelay<Int>()
/// let labels = relay.map { "#\($0)" }    // an Infallible<String>
/// let subscription = labels.observe { print($0) }
/// relay.accept(1)
/// relay.accept(2)
/// // Prints "#1", "#2"
/// ```
public struct Infallible<Value>: InfallibleType {
    @usableFromInline let source: Observable<Value>

    /// Wraps `source`, which the caller knows never fails.
    @inlinable
    init(never source: Observable<Value>) {
        self.source = source
    }

    /// Runs the stream's recipe for `observer`.
    @inlinable
    public func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        source.subscribe(observer)
    }

    /// The stream as a plain ``Observable``.
    @inlinable
    public func asObservable() -> Observable<Value> { source }
}

extension Infallible: Sendable where Value: Sendable {}

extension PublishRelay: InfallibleType {}
extension BehaviorRelay: InfallibleType {}
extension ActionHandle: InfallibleType {}
extension Property: InfallibleType {}
extension MutableProperty: InfallibleType {}

extension InfallibleType {
    /// This source as an ``Infallible`` stream.
    @inlinable
    public func asInfallible() -> Infallible<Value> {
        Infallible(never: asObservable())
    }

    /// `map(_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func map<NewValue>(_ transform: @escaping (Value) -> NewValue) -> Infallible<NewValue> {
        Infallible<NewValue>(never: asObservable().map(transform))
    }

    /// `filter(_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func filter(_ isIncluded: @escaping (Value) -> Bool) -> Infallible<Value> {
        Infallible(never: asObservable().filter(isIncluded))
    }

    /// `compactMap(_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func compactMap<NewValue>(_ transform: @escaping (Value) -> NewValue?) -> Infallible<NewValue> {
        Infallible<NewValue>(never: asObservable().compactMap(transform))
    }

    /// `scan(_:_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func scan<Result>(
        _ initial: Result, _ accumulate: @escaping (Result, Value) -> Result
    ) -> Infallible<Result> {
        Infallible<Result>(never: asObservable().scan(initial, accumulate))
    }

    /// `distinctUntilChanged(by:)` that keeps the fact that the stream never fails.
    @inlinable
    public func distinctUntilChanged(by isEquivalent: @escaping (Value, Value) -> Bool) -> Infallible<Value> {
        Infallible(never: asObservable().distinctUntilChanged(by: isEquivalent))
    }

    /// `startWith(_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func startWith(_ values: Value...) -> Infallible<Value> {
        Infallible(never: asObservable().startWith(contentsOf: values))
    }

    /// `startWith(contentsOf:)` that keeps the fact that the stream never fails.
    @inlinable
    public func startWith(contentsOf values: [Value]) -> Infallible<Value> {
        Infallible(never: asObservable().startWith(contentsOf: values))
    }

    /// `skip(_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func skip(_ count: Int) -> Infallible<Value> {
        Infallible(never: asObservable().skip(count))
    }

    /// `take(_:)` that keeps the fact that the stream never fails.
    @inlinable
    public func take(_ count: Int) -> Infallible<Value> {
        Infallible(never: asObservable().take(count))
    }
}

extension InfallibleType where Value: Equatable {
    /// `distinctUntilChanged()` that keeps the fact that the stream never fails.
    @inlinable
    public func distinctUntilChanged() -> Infallible<Value> {
        Infallible(never: asObservable().distinctUntilChanged())
    }
}

extension InfallibleType where Value: Sendable {
    /// The values as an `AsyncSequence` that never throws: `for await value in relay.map { $0 }.values`.
    ///
    /// A relay or handle delivers later values only; a property delivers its current value first. A slow
    /// loop gets every value by default (``ValuesBuffering/unbounded``); see ``ObservableType/values``.
    ///
    /// ```swift
    /// let relay = BehaviorRelay(1)
    /// for await value in relay.map({ $0 * 10 }).values {
    ///     print(value)
    ///     if value == 30 { break }
    ///     relay.accept(value / 10 + 1)
    /// }
    /// // Prints "10", "20", "30"
    /// ```
    public var values: ObservableValues<Value, Never> {
        ObservableValues(source: asObservable(), buffering: .unbounded)
    }

    /// The values as an `AsyncSequence` that never throws and keeps values as `buffering` says.
    public func values(buffering: ValuesBuffering) -> ObservableValues<Value, Never> {
        ObservableValues(source: asObservable(), buffering: buffering)
    }
}
