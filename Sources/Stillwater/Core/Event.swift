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
    /// This is the one place where a value transformation meets the event grammar: `map` and every
    /// operator that rewrites values use it.
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
    /// events always pass. Used by `filter`.
    @inlinable
    public func filter(_ isIncluded: (Value) throws -> Bool) rethrows -> Event? {
        if case .next(let value) = self, try !isIncluded(value) { return nil }
        return self
    }

    /// The event with its value transformed, or `nil` when the transform returns `nil`. Terminal events
    /// pass unchanged. Used by `compactMap`.
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
