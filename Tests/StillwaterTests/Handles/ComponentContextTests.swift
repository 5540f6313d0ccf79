import Testing
@testable import Stillwater

private enum AccentKey: ContextKey {
    static let defaultValue = "blue"
}

private enum DepthKey: ContextKey {
    static let defaultValue = 0
}

private enum OnToggleKey: ContextKey {
    static let defaultValue = ActionHandle<Int>()
}

/// A closure cannot be compared: the value type of the problem handles solve.
private enum OnToggleClosureKey: ContextKey {
    static let defaultValue: @Sendable (Int) -> Void = { _ in }
}

/// A key that compares its (non-Equatable) objects by identity, by implementing `isEqual`.
private final class Service: Sendable {}
private enum ServiceKey: ContextKey {
    static let defaultValue = Service()
    static func isEqual(_ lhs: Service, _ rhs: Service) -> Bool { lhs === rhs }
}

extension ComponentContext {
    fileprivate var accent: String {
        get { self[AccentKey.self] }
        set { self[AccentKey.self] = newValue }
    }
}

/// A child's inputs, holding the context it reads.
private struct ChildProps: Equatable {
    var title: String
    var context: ComponentContext
}

@Suite("ComponentContext")
struct ComponentContextTests {
    // MARK: Reading and overriding

    @Test("a key nobody set reads as its default")
    func defaults() {
        let context = ComponentContext()
        #expect(context[AccentKey.self] == "blue")
        #expect(context[DepthKey.self] == 0)
        #expect(context[OnToggleKey.self] == OnToggleKey.defaultValue)
        #expect(!context.contains(AccentKey.self))
    }

    @Test("a value set under a key is read back by that key only")
    func setAndGet() {
        var context = ComponentContext()
        context[AccentKey.self] = "red"
        context[DepthKey.self] = 2
        #expect(context[AccentKey.self] == "red")
        #expect(context[DepthKey.self] == 2)
        #expect(context.contains(AccentKey.self))
        context[DepthKey.self] = 3
        #expect(context[DepthKey.self] == 3)
    }

    @Test("a parent overrides a key for one subtree; its siblings and ancestors keep theirs")
    func overrideForSubtree() {
        let onToggle = ActionHandle<Int>()
        let root = ComponentContext().setting(OnToggleKey.self, to: onToggle)
        let warning = root.setting(AccentKey.self, to: "red")      // passed to one subtree
        let nested = warning.setting(\.accent, to: "orange")       // overridden again below it
        #expect(root[AccentKey.self] == "blue")
        #expect(warning[AccentKey.self] == "red")
        #expect(nested[AccentKey.self] == "orange")
        #expect(nested[OnToggleKey.self] == onToggle, "keys not overridden are inherited")
    }

    @Test("removing a key makes it read as its default again")
    func removing() {
        let context = ComponentContext().setting(AccentKey.self, to: "red")
        let removed = context.removing(AccentKey.self)
        #expect(removed[AccentKey.self] == "blue")
        #expect(!removed.contains(AccentKey.self))
        #expect(context[AccentKey.self] == "red")
        #expect(ComponentContext().removing(AccentKey.self) == ComponentContext())
    }

    // MARK: Equality

    @Test("contexts rebuilt with the same handles and equal values are equal")
    func equalWhenRebuiltWithSameHandles() {
        let onToggle = ActionHandle<Int>()
        func build() -> ComponentContext {
            ComponentContext().setting(OnToggleKey.self, to: onToggle).setting(AccentKey.self, to: "red")
        }
        #expect(build() == build())
        #expect(ChildProps(title: "Milk", context: build()) == ChildProps(title: "Milk", context: build()))
    }

    @Test("contexts rebuilt with new handles are not equal")
    func unequalWithNewHandles() {
        func build() -> ComponentContext {
            ComponentContext().setting(OnToggleKey.self, to: ActionHandle())
        }
        #expect(build() != build())
    }

    @Test("a changed value makes contexts unequal, whichever side holds it")
    func changedValue() {
        let base = ComponentContext().setting(DepthKey.self, to: 1)
        let changed = base.setting(DepthKey.self, to: 2)
        let extra = base.setting(AccentKey.self, to: "red")
        #expect(base != changed)
        #expect(base != extra)
        #expect(extra != base)
    }

    @Test("a key set to its default equals a key left unset")
    func explicitDefault() {
        let explicit = ComponentContext().setting(AccentKey.self, to: "blue")
        #expect(explicit == ComponentContext())
        #expect(ComponentContext() == explicit)
    }

    @Test("a closure set again counts as changed; the same entry passed down counts as unchanged")
    func closuresCannotBeCompared() {
        let parent = ComponentContext().setting(OnToggleClosureKey.self, to: { _ in })
        let passedDown = parent.setting(AccentKey.self, to: "blue")   // shares the closure's entry
        #expect(passedDown == parent)
        let rebuilt = ComponentContext().setting(OnToggleClosureKey.self, to: { _ in })
        #expect(rebuilt != parent)
        // An unset closure key against a set one cannot be shown equal either.
        #expect(ComponentContext() != parent)
    }

    @Test("a key may compare its values its own way")
    func customComparison() {
        let service = Service()
        let first = ComponentContext().setting(ServiceKey.self, to: service)
        #expect(first == ComponentContext().setting(ServiceKey.self, to: service))
        #expect(first != ComponentContext().setting(ServiceKey.self, to: Service()))
    }

    @Test("hasSameValues compares only the keys a component reads")
    func narrowedComparison() {
        let onToggle = ActionHandle<Int>()
        let before = ComponentContext().setting(OnToggleKey.self, to: onToggle).setting(DepthKey.self, to: 1)
        let after = before.setting(DepthKey.self, to: 2).setting(AccentKey.self, to: "blue")
        #expect(after != before)
        #expect(after.hasSameValues(as: before, for: [OnToggleKey.self, AccentKey.self]))
        #expect(!after.hasSameValues(as: before, for: [OnToggleKey.self, DepthKey.self]))
        #expect(after.hasSameValue(as: before, for: OnToggleKey.self))
        #expect(!after.hasSameValue(as: before, for: DepthKey.self))
        #expect(after.hasSameValues(as: before, for: []))
    }

    @Test("a RenderGate fed a context skips rebuilds with the same handles and renders on a new one")
    func gateOverContext() {
        let onToggle = ActionHandle<Int>()
        let gate = RenderGate<ChildProps> { _ in }
        for _ in 0..<5 {
            gate.update(ChildProps(title: "Milk", context: ComponentContext().setting(OnToggleKey.self, to: onToggle)))
        }
        #expect(gate.renderCount == 1)
        gate.update(ChildProps(title: "Milk", context: ComponentContext().setting(OnToggleKey.self, to: ActionHandle())))
        #expect(gate.renderCount == 2)
    }

    @Test("the description names the keys that were set, in order")
    func description() {
        let context = ComponentContext().setting(DepthKey.self, to: 1).setting(AccentKey.self, to: "red")
        #expect(context.description == "ComponentContext(AccentKey, DepthKey)")
        #expect(ComponentContext().description == "ComponentContext()")
    }
}
