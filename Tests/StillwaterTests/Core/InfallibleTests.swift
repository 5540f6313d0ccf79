import Testing
import StillwaterTesting
@testable import Stillwater

/// A view model that must be `Sendable`: it holds a stream and derived properties.
struct StatusViewModel: Sendable {
    let status: Observable<String>
    let count: Property<Int>
    let labels: Infallible<String>
}

@Suite("Never-failing streams and Sendable streams")
struct InfallibleTests {
    @Test("a view model holding an Observable and derived properties is Sendable and crosses to a task")
    func sendableViewModel() async {
        let relay = BehaviorRelay(2)
        let model = StatusViewModel(
            status: relay.asObservable().map { "\($0) items" },
            count: MutableProperty(3).map { $0 + 1 },
            labels: relay.map { "#\($0)" }
        )
        let status = await Task.detached { () -> String? in
            try? await model.status.first()
        }.value
        #expect(status == "2 items")
        #expect(model.count.value == 4)
    }

    @Test("for await over operators of a relay needs no try")
    func relayOperatorsWithoutTry() async {
        let relay = BehaviorRelay(1)
        var seen: [String] = []
        for await label in relay.map({ $0 * 10 }).filter({ $0 != 20 }).map({ "v\($0)" }).values {
            seen.append(label)
            if seen.count == 3 { break }
            // Two values each time: the filter drops 20, and the loop must not wait for it.
            relay.accept(relay.value + 1)
            relay.accept(relay.value + 1)
        }
        #expect(seen == ["v10", "v30", "v40"])
    }

    @Test("for await over a derived property and an action handle's scan needs no try")
    func propertyAndHandleWithoutTry() async {
        let count = MutableProperty(1)
        var doubled: [Int] = []
        for await value in count.map({ $0 * 2 }).values {
            doubled.append(value)
            if value >= 6 { break }
            count.value += 1
        }
        #expect(doubled == [2, 4, 6])

        let tapped = ActionHandle<Int>()
        let totals = tapped.scan(0, +).distinctUntilChanged().skip(0).take(2)
        let recorder = Recorder(totals)
        tapped(1)
        tapped(0)
        tapped(2)
        tapped(5)
        #expect(recorder.values == [1, 3])
        #expect(recorder.isCompleted)
    }

    @Test("the never-failing operators behave like their Observable forms")
    func operatorsMatchObservable() {
        let relay = PublishRelay<Int>()
        let infallible = Recorder(relay.compactMap { $0 > 0 ? $0 : nil }.startWith(0).distinctUntilChanged(by: ==))
        let observable = Recorder(relay.asObservable().compactMap { $0 > 0 ? $0 : nil }.startWith(0).distinctUntilChanged(by: ==))
        for value in [1, 1, -2, 3, 3, 0, 4] { relay.accept(value) }
        #expect(infallible.values == observable.values)
        #expect(infallible.values == [0, 1, 3, 4])
    }

    @Test("a plain Observable is still available where the context asks for one")
    func contextualObservable() {
        let relay = PublishRelay<Int>()
        let stream: Observable<Int> = relay.map { $0 + 1 }
        let recorder = Recorder(stream)
        relay.accept(1)
        #expect(recorder.values == [2])
    }
}
