/// A source of events that observers subscribe to.
///
/// Every stream in Stillwater conforms: ``Observable``, the subjects and relays, properties and action
/// handles. Operators are defined once, on this protocol, and each returns an ``Observable``.
///
/// The contract every conformer keeps (see the Contracts article):
/// - events follow the grammar `next* (error | completed)?`;
/// - one observer never receives two events at the same time, and all observers of one source receive its
///   events in the same order;
/// - an event sent from inside an observer is delivered after the current event has reached every
///   observer, never nested;
/// - after the returned ``Subscription`` is cancelled, the observer receives nothing more from deliveries
///   on the cancelling thread, and the chain releases what it captured.
public protocol ObservableType<Value> {
    /// The type of the values the stream sends.
    associatedtype Value

    /// Registers `observer` for this stream's events until the returned subscription is cancelled or
    /// released.
    ///
    /// - Parameter observer: Called with each event, one at a time.
    /// - Returns: A subscription; keep it for as long as you want events. Releasing it cancels it.
    func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription

    /// This stream as the type-erased ``Observable``.
    ///
    /// Operators and ``observe(_:)`` subscribe through it, so it must deliver exactly what
    /// ``subscribe(_:)`` delivers. The default implementation does; the package's own sources return an
    /// `Observable` that reaches their observers directly. A custom implementation must not be built from
    /// operators on `self` (`map` on `self` would ask `asObservable()` again).
    func asObservable() -> Observable<Value>
}

extension ObservableType {
    /// The default type erasure: an ``Observable`` that subscribes to `self`.
    @inlinable
    public func asObservable() -> Observable<Value> {
        Observable { observer in self.subscribe(observer) }
    }

    /// Subscribes `observer` in the package's split form, through ``asObservable()``: the package's
    /// sources implement it natively, so no event closure is built in between; the default goes through
    /// `subscribe(_:)`.
    @inlinable
    func subscribe(_ observer: Observer<Value>) -> Subscription {
        asObservable().subscribe(observer)
    }

    /// Subscribes `observer` in the split form; `nil` when it left nothing to cancel, which is not the
    /// same as ended (see ``Observable/attach(_:)``).
    @inlinable
    func attach(_ observer: Observer<Value>) -> Subscription? {
        asObservable().attach(observer)
    }

    /// Calls `onNext` with each value, and ignores the terminal event.
    ///
    /// ```swift
    /// let subject = PublishSubject<String>()
    /// let subscription = subject.observe { print($0) }
    /// subject.send("hello")
    /// // Prints "hello"
    /// ```
    ///
    /// - Returns: A subscription; releasing it cancels it.
    @inlinable
    public func observe(_ onNext: @escaping (Value) -> Void) -> Subscription {
        subscribe(Observer(next: onNext, end: { _ in }))
    }

    /// Calls the handler that matches each event; a `nil` handler ignores that kind of event.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// subject.send(1)
    /// subject.complete()
    /// // Prints "1", "done"
    /// ```
    ///
    /// - Returns: A subscription; releasing it cancels it.
    @inlinable
    public func subscribe(
        onNext: ((Value) -> Void)? = nil,
        onError: ((any Error) -> Void)? = nil,
        onCompleted: (() -> Void)? = nil
    ) -> Subscription {
        subscribe(Observer(
            next: { onNext?($0) },
            end: { termination in
                switch termination {
                case .failed(let error): onError?(error)
                case .completed: onCompleted?()
                }
            }
        ))
    }
}
