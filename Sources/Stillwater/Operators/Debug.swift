extension ObservableType {
    /// Prints a line for every subscribe, value, error, completion and cancellation, prefixed by `label`.
    ///
    /// ```swift
    /// let subject = PublishSubject<Int>()
    /// let subscription = subject.debug("numbers", printer: { print($0) }).observe { _ in }
    /// subject.send(1)
    /// subscription.cancel()
    /// // Prints "numbers: subscribed", "numbers: next(1)", "numbers: cancelled"
    /// ```
    ///
    /// - Parameters:
    ///   - label: Names the stream in each line.
    ///   - printer: Where the lines go; standard output (`print`) by default (the example spells it out so
    ///     that its test can collect the lines).
    public func debug(
        _ label: String, printer: @escaping (String) -> Void = { print($0) }
    ) -> Observable<Value> {
        Observable { observer in
            printer("\(label): subscribed")
            // Dropped after the terminal event or cancellation, so what the printer captured is freed. It is
            // a struct's field, not the lock's state itself: a closure kept directly as a generic value is
            // re-wrapped on every read and write-back through the lock, one layer more per event.
            let log = LockedBox(DebugPrinter(print: printer))
            let upstream = self.subscribe { event in
                let printer = log.withLock { log in
                    defer { if event.isTerminal { log.print = nil } }
                    return log.print
                }
                printer?("\(label): \(event)")
                observer(event)
            }
            return Subscription {
                let printer = log.withLock { log in
                    defer { log.print = nil }
                    return log.print
                }
                printer?("\(label): cancelled")
                upstream.cancel()
            }
        }
    }
}

/// What `debug` prints with, until its subscription ends.
struct DebugPrinter {
    var print: ((String) -> Void)?
}
