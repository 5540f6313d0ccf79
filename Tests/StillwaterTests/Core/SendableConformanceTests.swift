import Testing
@testable import Stillwater
import StillwaterTesting

/// Compiles only while `T` is `Sendable`: the conformances below are checked by the compiler now (no
/// `@unchecked`), and this keeps them from being dropped by accident.
private func isSendable<T: Sendable>(_: T.Type) -> Bool { true }

@Suite("Sendable conformances")
struct SendableConformanceTests {
    @Test("sources, properties and handles of Sendable values are Sendable")
    func sources() {
        #expect(isSendable(PublishSubject<Int>.self))
        #expect(isSendable(BehaviorSubject<Int>.self))
        #expect(isSendable(ReplaySubject<Int>.self))
        #expect(isSendable(PublishRelay<Int>.self))
        #expect(isSendable(BehaviorRelay<Int>.self))
        #expect(isSendable(Property<Int>.self))
        #expect(isSendable(MutableProperty<Int>.self))
        #expect(isSendable(ActionHandle<Void>.self))
        #expect(isSendable(ActionHandle<Int>.self))
        #expect(isSendable(Store<Int>.self))
        #expect(isSendable(Observable<Int>.self))
    }

    @Test("Observable is Sendable only when its Value is; merge and concat still infer a non-Sendable Value")
    func observableOfNonSendableValues() {
        final class Box {     // not Sendable
            let number: Int
            init(_ number: Int) { self.number = number }
        }
        let a = Observable.just(Box(1))
        let b = Observable.just(Box(2))
        var seen: [Int] = []
        let merged = Observable.merge(a, b).merge(with: a).observe { seen.append($0.number) }
        let concatenated = Observable.concat(a, b).concat(a).observe { seen.append($0.number) }
        #expect(seen == [1, 2, 1, 1, 2, 1])
        withExtendedLifetime((merged, concatenated)) {}
    }

    @Test("subscriptions, emitters, history, dispatchers, async values and the test tools are Sendable")
    func others() {
        #expect(isSendable(Subscription.self))
        #expect(isSendable(Emitter<Int>.self))
        #expect(isSendable(History<LiftedAction<Int, Noop>>.self))
        #expect(isSendable(Dispatcher<String>.self))
        #expect(isSendable(ObservableValues<Int, any Error>.self))
        #expect(isSendable(Recorder<Int>.self))
        #expect(isSendable(TestSource<Int>.self))
        #expect(isSendable(TestScheduler.self))
        #expect(isSendable(TestStore<Int, Noop>.self))
    }

    @Test("a handle's Sendable parameter lets a value holding it cross into a task")
    func handleInTask() async {
        struct Pick: Sendable { var row: Int }
        struct Props: Sendable { var onPick: ActionHandle<Pick> }
        let props = Props(onPick: ActionHandle())
        let picked = Recorder(props.onPick.map(\.row))
        await Task.detached { props.onPick(Pick(row: 4)) }.value
        #expect(picked.values == [4])
    }
}

private struct Noop: Action, Sendable {
    func reduce(_ state: inout Int) {}
}
