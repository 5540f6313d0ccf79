/// One thing a stream says: a value, a failure, or that it has finished.
///
/// A stream sends any number of `next` events followed by at most one terminal event (`error` or
/// `completed`). Nothing follows a terminal event.
///
/// ```swift
/// let subject = PublishSubject<Int>()
/// let subscription = subject.subscribe { event in print(event) }
/// subject.send(1)
/// subject.complete()
/// // Prints "next(1)", "completed"
/// ```
public enum Event<Value> {
    /// A value.
    case next(Value)
    /// The stream failed; nothing follows.
    case error(any Error)
    /// The stream finished; nothing follows.
    case completed
}

extension Event: Sendable where Value: Sendable {}

extension Event {
    /// The value of a `next` event, or `nil` for a terminal event.
    @inlinable
    public var value: Value? {
        if case .next(let value) = self { return value }
        return nil
    }

    /// The error of an `error` event, or `nil`.
    @inlinable
    public var error: (any Error)? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// Whether this event ends the stream (`error` or `completed`).
    @inlinable
    public var isTerminal: Bool {
        if case .next = self { return false }
        return true
    }

    /// The same event with its value transformed; terminal events pass through unchanged.
    ///
    /// For operators written on whole events, with ``Observable/init(_:)``: a custom operator rewrites
    /// each event it forwards without spelling out the terminal cases.
    ///
    /// ```swift
    /// let prices = PublishSubject<Int>()
    /// let labels = Observable<String> { observer in
    ///     prices.subscribe { event in observer(event.map { "\($0) EUR" }) }
    /// }
    /// let subscription = labels.observe { print($0) }
    /// prices.send(5)
    /// // Prints "5 EUR"
    /// ```
    ///
    /// In the package, ``ObservableType/diffed(isEqual:)`` uses it. The `map` operator does not: it hands
    /// each value to the next stage directly, without building an event.
    @inlinable
    public func map<NewValue>(_ transform: (Value) throws -> NewValue) rethrows -> Event<NewValue> {
        switch self {
        case .next(let value): return .next(try transform(value))
        case .error(let error): return .error(error)
        case .completed: return .completed
        }
    }
}

extension Event: CustomStringConvertible {
    /// `next(value)`, `error(description)` or `completed`.
    public var description: String {
        switch self {
        case .next(let value): return "next(\(value))"
        case .error(let error): return "error(\(error))"
        case .completed: return "completed"
        }
    }
}

extension Event: Equatable where Value: Equatable {
    /// Two events are equal when both are `next` with equal values, both `completed`, or both `error`
    /// with equal descriptions of the same error type. Errors are compared by type and description because
    /// `any Error` is not `Equatable`; this is meant for tests.
    public static func == (lhs: Event<Value>, rhs: Event<Value>) -> Bool {
        switch (lhs, rhs) {
        case let (.next(l), .next(r)): return l == r
        case (.completed, .completed): return true
        case let (.error(l), .error(r)):
            return type(of: l) == type(of: r) && String(describing: l) == String(describing: r)
        default: return false
        }
    }
}

extension Event {
    /// The event with its value kept when `isIncluded` says so; `nil` when the value is dropped. Terminal
    /// events always pass.
    ///
    /// For operators written on whole events, with ``Observable/init(_:)``, like ``map(_:)``. Nothing in
    /// the package calls it: the `filter` operator tests each value directly, without building an event.
    @inlinable
    public func filter(_ isIncluded: (Value) throws -> Bool) rethrows -> Event? {
        if case .next(let value) = self, try !isIncluded(value) { return nil }
        return self
    }

    /// The event with its value transformed, or `nil` when the transform returns `nil`. Terminal events
    /// pass unchanged.
    ///
    /// For operators written on whole events, with ``Observable/init(_:)``, like ``map(_:)``. Nothing in
    /// the package calls it: the `compactMap` operator transforms each value directly, without building
    /// an event.
    @inlinable
    public func compactMap<NewValue>(_ transform: (Value) throws -> NewValue?) rethrows -> Event<NewValue>? {
        switch self {
        case .next(let value):
            guard let newValue = try transform(value) else { return nil }
            return .next(newValue)
        case .error(let error): return .error(error)
        case .completed: return .completed
        }
    }
}
