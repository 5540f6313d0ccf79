import Foundation
import Testing
@testable import Stillwater

/// A counter state for the store whose action reads the store it is reduced by.
struct PeekTally: Sendable {
    var count = 0
}

/// An action that reads the store it is reduced by: the mistake the message names.
struct PeekingIncrement: Action {
    let peek: @Sendable () -> Int

    func reduce(_ state: inout PeekTally) {
        state.count = peek() + 1
    }
}

/// A body that touches its own property or store stops the program with Stillwater's message, which
/// names the mistake and the fix, instead of the standard library's "Recursive call to lock Mutex".
@Suite("Lock misuse")
struct LockMisuseTests {
    /// The standard error of an exit test, as text.
    static func text(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test("modify whose body reads its own property")
    func modifyReadsItself() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let property = MutableProperty(1)
            property.modify { $0 = property.value + 1 }
        }
        let text = Self.text(result)
        #expect(text.contains("a MutableProperty's modify body read or wrote the same property"), "\(text)")
        #expect(text.contains("change the value only through the body's inout argument"), "\(text)")
        #expect(!text.contains("Recursive call"), "\(text)")
    }

    @Test("modify whose body writes its own property through a binding")
    func modifyWritesItsBinding() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct Profile { var name = "" }
            let profile = MutableProperty(Profile())
            let name = profile.binding(\.name)
            profile.modify { _ in name.value = "Ada" }
        }
        #expect(Self.text(result).contains("modify body read or wrote the same property"))
    }

    @Test("modify whose body reads a derived property of its own property")
    func modifyReadsDerived() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let count = MutableProperty(1)
            let doubled = count.map { $0 * 2 }
            count.modify { $0 = doubled.value }
        }
        #expect(Self.text(result).contains("modify body read or wrote the same property"))
    }

    @Test("an action's reduce that reads its own store")
    func reduceReadsItsStore() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let box = StoreBox()
            let store = Store(PeekTally())
            box.store = store
            store.dispatch(PeekingIncrement { box.store?.state.value.count ?? 0 })
        }
        let text = Self.text(result)
        #expect(text.contains("an Action's reduce read its own store"), "\(text)")
        #expect(text.contains("dispatch follow-up actions from an observer or a DynamicAction"), "\(text)")
        #expect(!text.contains("Recursive call"), "\(text)")
    }

    @Test("reading a property from its own observer is fine: observers run after the lock is released")
    func observersMayRead() {
        let property = MutableProperty(1)
        let seen = Shared<[Int]>([])
        let subscription = property.observe { _ in seen.value.append(property.value) }
        property.modify { $0 += 1 }
        #expect(seen.value == [1, 2])
        subscription.cancel()
    }
}

/// Lets an action reach the store it is dispatched to.
final class StoreBox: @unchecked Sendable {
    var store: Store<PeekTally>?
}
