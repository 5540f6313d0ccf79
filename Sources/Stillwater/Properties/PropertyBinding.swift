extension MutableProperty: BindingTarget {
    /// Makes `value` the property's value and notifies its observers: what
    /// ``ObservableType/bind(to:)-(Target)`` does with each value of a stream bound into the property.
    ///
    /// ```swift
    /// let input = PublishSubject<String>()
    /// let title = MutableProperty("")
    /// let binding = input.bind(to: title)
    /// input.send("Inbox")
    /// print(title.value)
    /// // Prints "Inbox"
    /// ```
    ///
    /// The same as setting ``value``: it notifies even when `value` equals the current value.
    @inlinable
    public func accept(_ value: Value) {
        self.value = value
    }
}

extension MutableProperty where Value: Equatable {
    /// Keeps this property and `other` equal: `other` takes this property's value now, and from then on a
    /// change of either one is written into the other.
    ///
    /// A write that came from the other side is not sent back, so the two never echo each other in a
    /// loop, and writing an equal value writes nothing.
    ///
    /// ```swift
    /// let slider = MutableProperty(0.5)
    /// let field = MutableProperty(0.0)
    /// let link = slider.bindBidirectionally(with: field)
    /// field.value = 0.8
    /// print(slider.value)
    /// // Prints "0.8"
    /// ```
    ///
    /// - Note: Meant for one thread of control. When both sides are written at the same moment from
    ///   different threads, each ends with one of the two writes, which may differ.
    /// - Returns: A subscription that ends the link in both directions.
    public func bindBidirectionally(with other: MutableProperty<Value>) -> Subscription {
        let echoes = LockedBox(BidirectionalEchoes<Value>())
        let forward = self.subscribe { event in
            guard case .next(let value) = event else { return }
            let mustWrite = echoes.withLock { $0.shouldForward(value, from: .first, into: other.value) }
            if mustWrite { other.value = value }
        }
        let backward = other.changes.subscribe { event in
            guard case .next(let value) = event else { return }
            let mustWrite = echoes.withLock { $0.shouldForward(value, from: .second, into: self.value) }
            if mustWrite { self.value = value }
        }
        return Subscription([forward, backward])
    }
}

/// The writes each side of a two-way binding made into the other, so their echoes are recognised.
struct BidirectionalEchoes<Value: Equatable> {
    enum Side { case first, second }

    /// Values written into the second side whose notifications have not come back yet, in order.
    private var toSecond: [Value] = []
    private var toFirst: [Value] = []

    /// Whether a change of `side` to `value` must be written into the other side, which holds
    /// `otherValue`. A change that is the echo of this binding's own write is swallowed, and so is one the
    /// other side already holds.
    mutating func shouldForward(_ value: Value, from side: Side, into otherValue: Value) -> Bool {
        switch side {
        case .first:
            if let echo = toFirst.first, echo == value {
                toFirst.removeFirst()
                return false
            }
            guard otherValue != value else { return false }
            toSecond.append(value)
        case .second:
            if let echo = toSecond.first, echo == value {
                toSecond.removeFirst()
                return false
            }
            guard otherValue != value else { return false }
            toFirst.append(value)
        }
        return true
    }
}
