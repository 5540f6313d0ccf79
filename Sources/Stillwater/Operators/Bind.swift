extension ObservableType {
    /// Sends every value of this stream into `relay`. Terminal events end the binding, not the relay.
    ///
    /// ```swift
    /// let source = PublishSubject<Int>()
    /// let relay = PublishRelay<Int>()
    /// let printing = relay.observe { print($0) }
    /// let binding = source.bind(to: relay)
    /// source.send(1)
    /// // Prints "1"
    /// ```
    ///
    /// - Returns: The binding's subscription; releasing it ends the binding.
    public func bind(to relay: PublishRelay<Value>) -> Subscription {
        observe { relay.accept($0) }
    }

    /// Makes every value of this stream the relay's current value. Terminal events end the binding, not
    /// the relay.
    ///
    /// - Returns: The binding's subscription; releasing it ends the binding.
    public func bind(to relay: BehaviorRelay<Value>) -> Subscription {
        observe { relay.accept($0) }
    }
}
