extension Observable {
    /// A stream of the one value an `async` call returns: the value, then completed; or the call's error.
    ///
    /// Each subscription runs `operation` in a task of its own, started when subscribing, and the value
    /// (or the failure) arrives from that task. Cancelling the subscription cancels the task, so an
    /// operation that honours cancellation (`URLSession`, `Task.sleep`, `Task.checkCancellation()`) stops;
    /// whatever it returns or throws after that is dropped. This is how one request joins a pipeline:
    /// inside ``ObservableType/flatMapLatest(_:)`` a new query cancels the request of the old one.
    ///
    /// <!-- doc-test: waits for the value, sent from the subscription's task -->
    /// ```swift
    /// func temperature(in city: String) async throws -> Int { city == "Oslo" ? 4 : 21 }
    /// let subscription = Observable.fromAsync { try await temperature(in: "Oslo") }
    ///     .subscribe(onNext: { print("\($0) °C") }, onCompleted: { print("done") })
    /// // from the subscription's task, shortly after:
    /// // Prints "4 °C", "done"
    /// ```
    ///
    /// - Parameters:
    ///   - priority: The priority of each subscription's task; `nil` (the default) inherits the caller's.
    ///   - operation: The call, run once per subscription.
    public static func fromAsync(
        priority: TaskPriority? = nil, _ operation: @escaping @Sendable () async throws -> sending Value
    ) -> Observable<Value> {
        create { emitter in
            let task = Task(priority: priority) {
                do {
                    let value = try await operation()
                    emitter.send(value)
                    emitter.complete()
                } catch {
                    emitter.fail(error)
                }
            }
            return Subscription { task.cancel() }
        }
    }

    /// A stream made afresh for each subscriber by `makeSource`, when it subscribes.
    ///
    /// Use it to read state or start work at subscription time rather than when the pipeline is built,
    /// or to give each subscriber streams of its own. If `makeSource` throws, that subscriber receives
    /// the error.
    ///
    /// ```swift
    /// var counter = 0
    /// let fresh = Observable.deferred { () -> Observable<Int> in
    ///     counter += 1
    ///     return Observable.just(counter)
    /// }
    /// let first = fresh.observe { print($0) }
    /// let second = fresh.observe { print($0) }
    /// // Prints "1", "2"
    /// ```
    public static func deferred<Source: ObservableType>(
        _ makeSource: @escaping () throws -> Source
    ) -> Observable<Value> where Source.Value == Value {
        Observable.recipe({ observer in
            let source: Source
            do {
                source = try makeSource()
            } catch {
                observer.end(.failed(error))
                return .empty
            }
            return source.subscribe(observer)
        })
    }
}
