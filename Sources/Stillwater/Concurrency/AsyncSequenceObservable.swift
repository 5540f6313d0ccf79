extension Observable {
    /// A stream that sends the elements of an `AsyncSequence`, then completes (or fails with its error).
    ///
    /// Each subscription iterates the sequence in its own task, started when subscribing; the values
    /// arrive from that task. Cancelling the subscription cancels the task, and nothing more is delivered
    /// even if the sequence ignores cancellation.
    ///
    /// <!-- doc-test: waits for the values, sent from the subscription's task -->
    /// ```swift
    /// let (numbers, continuation) = AsyncStream<Int>.makeStream()
    /// let subscription = Observable.from(numbers)
    ///     .subscribe(onNext: { print($0) }, onCompleted: { print("done") })
    /// continuation.yield(1)
    /// continuation.finish()
    /// // from the subscription's task, shortly after:
    /// // Prints "1", "done"
    /// ```
    ///
    /// - Note: A sequence that can be iterated only once (an `AsyncStream`) delivers its elements to the
    ///   first subscription only; share the stream with ``ObservableType/share(replay:)`` to reach several
    ///   observers.
    public static func from<Sequence: AsyncSequence & Sendable>(_ sequence: Sequence) -> Observable<Value>
        where Sequence.Element == Value
    {
        create { emitter in
            let task = Task {
                do {
                    for try await value in sequence {
                        guard emitter.isActive else { return }
                        emitter.send(value)
                    }
                    emitter.complete()
                } catch {
                    emitter.fail(error)
                }
            }
            return Subscription { task.cancel() }
        }
    }
}
