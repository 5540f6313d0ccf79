import Testing
@testable import Stillwater

@Suite("Store effects: cancellation bookkeeping")
struct EffectCancelTests {
    @Test("ids no effect holds any more are forgotten: 10 000 ids, each cancelled in flight, leave a small table")
    func tokenTableStaysSmall() {
        let store = Store(EffectLog())
        for index in 0..<10_000 {
            store.dispatch(Step("row \(index)") {
                .stream(Observable.just(Step("done \(index)"))).cancellable(id: index, cancelInFlight: true)
            })
        }
        #expect(store.state.value.log.count == 20_000)
        // Read after the dispatches returned, so no thread is the deliverer: the field itself, not
        // `store.deliverer` (whose debug check would stop this thread).
        #expect(store.effects.owned.tokens.count <= 128)
    }

    @Test("an id still held by a running effect is remembered, and its cancel reaches that effect")
    func heldIdRemembered() {
        let subject = PublishSubject<Step>()
        let store = Store(EffectLog())
        store.dispatch(Step("live") { .stream(subject).cancellable(id: "live") })
        for index in 0..<1_000 {
            store.dispatch(Step("other") { .none.merge(with: .send(Step("x"))).cancellable(id: index) })
        }
        subject.send(Step("before"))
        store.dispatch(Step("stop") { .cancel(id: "live") })
        subject.send(Step("after"))
        #expect(store.state.value.log.suffix(2) == ["before", "stop"])
        #expect(store.runningEffectCount == 0)
    }

    @Test("after a cancel shared by many concatenations, what comes next in each starts in the order they started")
    func successorsInStartOrder() {
        let subjects = (0..<40).map { _ in PublishSubject<Step>() }
        let store = Store(EffectLog())
        for (index, subject) in subjects.enumerated() {
            store.dispatch(Step("start \(index)") {
                .concatenate(.stream(subject).cancellable(id: "shared"), .send(Step("next \(index)")))
            })
        }
        #expect(store.runningEffectCount == 40)
        store.dispatch(Step("cancel") { .cancel(id: "shared") })
        let after = Array(store.state.value.log.drop { $0 != "cancel" }.dropFirst())
        #expect(after == (0..<40).map { "next \($0)" })
        #expect(store.runningEffectCount == 0)
    }

    @Test("an effect started under an id after that id's cancel is not touched by it")
    func laterEffectUnaffected() {
        let first = PublishSubject<Step>()
        let second = PublishSubject<Step>()
        let store = Store(EffectLog())
        store.dispatch(Step("first") { .stream(first).cancellable(id: 1) })
        store.dispatch(Step("cancel") { .cancel(id: 1) })
        store.dispatch(Step("second") { .stream(second).cancellable(id: 1) })
        first.send(Step("from first"))
        second.send(Step("from second"))
        #expect(store.state.value.log == ["first", "cancel", "second", "from second"])
        #expect(store.runningEffectCount == 1)
    }
}
