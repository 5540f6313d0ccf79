import Testing
import Stillwater

/// The store example of "The store by example" (Stillwater.docc), with `print` replaced by a log, so the article stays true.
@Suite("Store-by-example article")
struct ReadmeStoreTests {
    struct Cart: Equatable { var items: [String] = []; var coupon = "" }

    enum CartAction: Action {
        case add(String), clear
        func reduce(_ state: inout Cart) {
            switch self {
            case .add(let item): state.items.append(item)
            case .clear: state.items.removeAll()
            }
        }
    }

    struct ApplyCoupon: Action {
        let code: String
        func reduce(_ state: inout Cart) { state.coupon = code }
    }

    struct AddIfMissing: DynamicAction {
        let item: String
        func call(_ store: Store<Cart>) -> Bool {
            guard !store.state.value.items.contains(item) else { return false }
            store.dispatch(CartAction.add(item))
            return true
        }
    }

    @Test("prints the count only when it changed, drops the empty item, and answers the dynamic action")
    func example() {
        let log = Shared<[String]>([])
        let noEmptyItems = Middleware<Cart> { store, action, next in
            if case .add("")? = action as? CartAction { return }
            next(action)
        }
        let store = Store(Cart(), middleware: [noEmptyItems])
        let count = store.scope(\.items.count).observe { log.value.append("items: \($0)") }

        store.dispatch(CartAction.add("milk"))
        store.dispatch(ApplyCoupon(code: "SPRING"))
        store.dispatch(CartAction.add(""))
        log.value.append("\(store.dispatch(AddIfMissing(item: "milk")))")

        #expect(log.value == ["items: 0", "items: 1", "false"])
        #expect(store.state.value == Cart(items: ["milk"], coupon: "SPRING"))
        count.cancel()
    }
}
