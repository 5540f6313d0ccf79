extension ObservableType {
    /// Shares one subscription to this stream among all observers, replaying the last `replay` values to
    /// each new observer.
    ///
    /// The first observer connects to the stream; later ones join that connection (and receive up to
    /// `replay` of the latest values first). When the last observer leaves, or the stream ends, the
    /// connection is dropped; the next observer starts a new one (with an empty replay buffer).
    ///
    /// ```swift
    /// var runs = 0
    /// let source = Observable<Int>.create { emitter in
    ///     runs += 1
    ///     emitter.send(runs)
    ///     return .empty
    /// }
    /// let shared = source.share(replay: 1)
    /// let first = shared.observe { print("first \($0)") }
    /// let second = shared.observe { print("second \($0)") }
    /// // Prints "first 1", "second 1"
    /// ```
    ///
    /// - Parameter replay: How many of the latest values a new observer receives first. Must not be
    ///   negative.
    public func share(replay: Int = 0) -> Observable<Value> {
        precondition(replay >= 0, "share(replay:) needs a replay count of 0 or more, got \(replay).")
        let connection = SharedConnection(source: self.asObservable(), replay: replay)
        return Observable { observer in connection.subscribe(observer) }
    }
}

/// The connection behind `share(replay:)`: one upstream subscription feeding an internal subject,
/// counted by observers.
final class SharedConnection<Value> {
    private struct State {
        var subject: SourceCore<Value>?
        var upstream: SubscriptionSlot?
        var observers = 0
    }

    private let source: Observable<Value>
    private let replay: Int
    private let state = Lock(State())

    init(source: Observable<Value>, replay: Int) {
        self.source = source
        self.replay = replay
    }

    func subscribe(_ observer: @escaping (Event<Value>) -> Void) -> Subscription {
        let (subject, upstream, connects) = state.withLock { state in
            state.observers += 1
            if let subject = state.subject, let upstream = state.upstream {
                return (subject, upstream, false)
            }
            let subject = SourceCore<Value>(.lastValues(replay))
            let upstream = SubscriptionSlot()
            state.subject = subject
            state.upstream = upstream
            return (subject, upstream, true)
        }
        let subscription = subject.subscribe(observer)
        if connects {
            // While connected, the upstream subscription holds the connection (the shared stream itself is
            // often a temporary); the cycle ends when the last observer leaves or the upstream ends.
            upstream.replace(with: source.subscribe { event in
                if event.isTerminal { self.disconnect(ifStill: subject) }
                subject.send(event)
            })
        }
        return Subscription { [weak self] in
            subscription.cancel()
            self?.leave(subject)
        }
    }

    private func leave(_ subject: SourceCore<Value>) {
        let upstream = state.withLock { state -> SubscriptionSlot? in
            guard state.subject === subject else { return nil }
            state.observers -= 1
            guard state.observers == 0 else { return nil }
            let upstream = state.upstream
            state.subject = nil
            state.upstream = nil
            return upstream
        }
        upstream?.cancel()
    }

    private func disconnect(ifStill subject: SourceCore<Value>) {
        state.withLock { state in
            guard state.subject === subject else { return }
            state.subject = nil
            state.upstream = nil
            state.observers = 0
        }
    }
}
