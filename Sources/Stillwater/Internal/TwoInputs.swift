/// An event of one of the two inputs of `sample` or `withLatestFrom`, as their serializer receives it.
@usableFromInline
enum TwoInputsEvent<Primary, Secondary> {
    case primary(Event<Primary>)
    case secondary(Event<Secondary>)
}

extension Observable {
    /// A stream of two inputs whose events reach one handler one at a time, through a ``Serializer``
    /// (`sample`, `withLatestFrom`).
    ///
    /// For each subscriber, `makeHandler` is handed the subscriber's observer and a `stop` that cancels
    /// both inputs; the handler it returns holds that subscription's state, and returns `false`
    /// after the terminal event. `secondary` is subscribed first when `secondaryFirst` is true (so a
    /// replaying secondary is read before the primary's first value), after `primary` otherwise.
    @inlinable
    static func twoInputs<Primary: ObservableType, Secondary: ObservableType>(
        _ primary: Primary,
        _ secondary: Secondary,
        secondaryFirst: Bool,
        _ makeHandler: @escaping (
            _ observer: Observer<Value>, _ stop: @escaping () -> Void
        ) -> (TwoInputsEvent<Primary.Value, Secondary.Value>) -> Bool
    ) -> Observable<Value> {
        Observable.recipe({ observer in
            let primarySlot = SubscriptionSlot()
            let secondarySlot = SubscriptionSlot()
            let serializer = Serializer(makeHandler(observer) {
                primarySlot.cancel()
                secondarySlot.cancel()
            })
            func subscribePrimary() {
                primarySlot.subscribe(to: primary, with: Observer(
                    next: { serializer.submit(.primary(.next($0))) },
                    end: { serializer.submit(.primary($0.event())) }
                ))
            }
            func subscribeSecondary() {
                secondarySlot.subscribe(to: secondary, with: Observer(
                    next: { serializer.submit(.secondary(.next($0))) },
                    end: { serializer.submit(.secondary($0.event())) }
                ))
            }
            if secondaryFirst {
                subscribeSecondary()
                subscribePrimary()
            } else {
                subscribePrimary()
                subscribeSecondary()
            }
            return Subscription {
                primarySlot.cancel()
                secondarySlot.cancel()
                serializer.cancel()
            }
        })
    }
}
