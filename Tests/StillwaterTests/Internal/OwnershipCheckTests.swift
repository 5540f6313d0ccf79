import Foundation
import Testing
@testable import Stillwater

/// Debug builds check the engine's ownership rule: state marked *Owned* (or *Host only*) is touched only
/// by the thread delivering for its source. A break stops the program with a message naming the rule.
@Suite("Engine ownership checks")
struct OwnershipCheckTests {
    static func text(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    #if DEBUG
    @Test("delivering to a source's observers without being its deliverer stops with the rule")
    func deliverOffTheDeliverer() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let core = SourceCore<Int>(.none)
            let subscription = core.subscribe(Observer(next: { _ in }, end: { _ in }))
            core.deliverOwned(.next(1))
            withExtendedLifetime(subscription) {}
        }
        let text = Self.text(result)
        #expect(text.contains("Stillwater engine rule broken"), "\(text)")
        #expect(text.contains("touched only by the thread delivering for it"), "\(text)")
    }

    @Test("touching a store's deliverer state off its deliverer stops with the store's rule")
    func storeDelivererOffTheDeliverer() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let store = Store(0)
            store.deliverer.inlineBudget = 3
        }
        let text = Self.text(result)
        #expect(text.contains("Stillwater store rule broken"), "\(text)")
        #expect(text.contains("touched only by the thread reducing its actions"), "\(text)")
    }

    @Test("the store's deliverer passes its check: effects, groups and child features from many threads")
    func storeDelivererPasses() async {
        let store = Store(EffectLog())
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for index in 0..<200 {
                        store.dispatch(Step("\(task)-\(index)") {
                            .stream(Observable.just(Step("done"))).cancellable(id: index % 7)
                        })
                    }
                }
            }
        }
        #expect(store.state.value.log.count == 1_600)
    }

    @Test("adding to a scope's observers off its root's deliverer stops with the rule")
    func scopeOffTheHost() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let root = RootStorage(1)
            let storage = ScopeStorage.shared(parent: root, keyPath: \Int.self)
            let box = ObserverBox(observer: Observer<Int>(next: { _ in }, end: { _ in }), source: storage) { _ in }
            storage.follower.add(box)
            withExtendedLifetime(root) {}
        }
        let text = Self.text(result)
        #expect(text.contains("Stillwater engine rule broken"), "\(text)")
        #expect(text.contains("touched only on its root's deliverer"), "\(text)")
    }
    #endif

    @Test("the deliverer itself passes every check: sends, subscribes and cancels from many threads")
    func rightfulOwnersPass() async {
        let subject = PublishSubject<Int>()
        let property = MutableProperty(0)
        let scoped = property.scope(\.self)
        let received = Shared(0)
        let subscriptions = [subject.observe { _ in received.value += 1 }, scoped.observe { _ in }]
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for value in 0..<500 {
                        subject.send(value)
                        property.value = task * 1_000 + value
                        scoped.observe { _ in }.cancel()
                    }
                }
            }
        }
        #expect(received.value == 2_000)
        withExtendedLifetime(subscriptions) {}
    }
}
