import Testing
@testable import Stillwater
import StillwaterTesting

/// Scopes read stored-property slices at their byte offset; these tests cover the shapes of key path
/// that have an offset and those that must fall back to the key path.
@Suite("Scope slices read at an offset")
struct ScopeOffsetTests {
    final class Reference: @unchecked Sendable { var count = 0 }
    struct Inner: Equatable { var flag = false; var label = "a"; var numbers: [Int] = [] }
    struct Generic<Payload: Equatable>: Equatable { var tag = 0; var payload: Payload }
    struct Root {
        var id = 0
        var inner = Inner()
        var pair: (Int, String) = (1, "one")
        var generic = Generic(payload: "p")
        var reference = Reference()
        var optional: Inner? = Inner()
        var computed: Int { id * 10 }
    }

    func engineOffset<Sub: Equatable>(_ scope: Property<Sub>) -> Int?? {
        (scope.storage as? ScopeStorage<Root, Sub>).map { $0.follower.offset }
    }

    @Test("stored properties of structs, nested, in tuples and in generic structs have an offset")
    func storedPathsHaveOffsets() {
        let root = MutableProperty(Root())
        #expect(engineOffset(root.scope(\.id)) == .some(.some(MemoryLayout<Root>.offset(of: \Root.id)!)))
        #expect(engineOffset(root.scope(\.inner.label))! != nil)
        #expect(engineOffset(root.scope(\.pair.1))! != nil)
        #expect(engineOffset(root.scope(\.generic.payload))! != nil)
    }

    @Test("computed properties, classes and optional chaining fall back to the key path")
    func otherPathsHaveNone() {
        let root = MutableProperty(Root())
        #expect(engineOffset(root.scope(\.computed))! == nil)
        #expect(engineOffset(root.scope(\.reference.count))! == nil)
        #expect(engineOffset(root.scope(\.optional?.flag))! == nil)
    }

    @Test("every shape of key path delivers the right slices, only when they changed")
    func deliveries() {
        let root = MutableProperty(Root())
        let label = Recorder(root.scope(\.inner.label))
        let numbers = Recorder(root.scope(\.inner.numbers))
        let second = Recorder(root.scope(\.pair.1))
        let payload = Recorder(root.scope(\.generic.payload))
        let computed = Recorder(root.scope(\.computed))
        let optionalFlag = Recorder(root.scope(\.optional?.flag))
        let reference = Recorder(root.scope(\.reference.count))

        root.modify { $0.inner.label = "b" }
        root.modify { $0.inner.numbers.append(7) }
        root.modify { $0.pair.1 = "uno" }
        root.modify { $0.generic.payload = "q" }
        root.modify { $0.id = 4 }
        root.modify { $0.optional = nil }
        root.modify { $0.reference.count = 3 }   // same object: the next parent change carries it
        root.modify { $0.id = 4 }

        #expect(label.values == ["a", "b"])
        #expect(numbers.values == [[], [7]])
        #expect(second.values == ["one", "uno"])
        #expect(payload.values == ["p", "q"])
        #expect(computed.values == [0, 40])
        #expect(optionalFlag.values == [false, nil])
        #expect(reference.values == [0, 3])
    }

    @Test("a scope of the whole value compares the whole value")
    func wholeValue() {
        let root = MutableProperty(Inner())
        let whole = Recorder(root.scope(\.self))
        root.value = Inner()
        root.modify { $0.flag = true }
        #expect(whole.values == [Inner(), Inner(flag: true)])
    }
}
