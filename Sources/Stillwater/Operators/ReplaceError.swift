extension ObservableType {
    /// Recovers from a failure by sending `value`, then completing.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let requests = PublishSubject<Int>()
    /// let subscription = requests.catchAndReturn(0)
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// requests.send(3)
    /// requests.fail(Offline())
    /// // Prints "3", "0", "done"
    /// ```
    ///
    /// The same as ``replaceError(with:)``; the two names are the ones RxSwift and Combine users know.
    public func catchAndReturn(_ value: Value) -> Observable<Value> {
        self.catch { _ in Observable.just(value) }
    }

    /// Replaces a failure with `value`, then completes; the same as ``catchAndReturn(_:)``.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let status = PublishSubject<String>()
    /// let subscription = status.replaceError(with: "offline").observe { print($0) }
    /// status.send("online")
    /// status.fail(Offline())
    /// // Prints "online", "offline"
    /// ```
    public func replaceError(with value: Value) -> Observable<Value> {
        catchAndReturn(value)
    }

    /// This stream as one that never fails: a failure is replaced by `value`, then the stream completes.
    ///
    /// The result is an ``Infallible``, so a `for await` loop over its ``InfallibleType/values`` needs no
    /// `try`, and the operators that cannot fail keep it infallible.
    ///
    /// ```swift
    /// struct Offline: Error {}
    /// let readings = PublishSubject<Int>()
    /// let display = readings.asInfallible(onErrorJustReturn: -1).map { "\($0) °C" }
    /// let subscription = display.observe { print($0) }
    /// readings.send(21)
    /// readings.fail(Offline())
    /// // Prints "21 °C", "-1 °C"
    /// ```
    public func asInfallible(onErrorJustReturn value: Value) -> Infallible<Value> {
        Infallible(never: catchAndReturn(value))
    }
}
