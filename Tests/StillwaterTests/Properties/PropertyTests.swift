import Testing
import StillwaterTesting
@testable import Stillwater

@Suite("Property")
struct PropertyTests {
    @Test("a constant property delivers its value and never changes")
    func constant() {
        let property = Property(value: 42)
        let recorder = Recorder(property)
        #expect(property.value == 42)
        #expect(recorder.events == [.next(42)])
        #expect(Recorder(property.changes).events.isEmpty)
    }

    @Test("a read-only view follows its mutable property")
    func readOnlyView() {
        let mutable = MutableProperty("a")
        let view = Property(mutable)
        let recorder = Recorder(view)
        mutable.value = "b"
        #expect(view.value == "b")
        #expect(recorder.values == ["a", "b"])
    }

    @Test("a scope of a read-only view is the same node as the mutable property's scope")
    func viewSharesScopes() {
        let mutable = MutableProperty(Pair(left: 1, right: 2))
        let view = Property(mutable)
        #expect(view.scope(\.left).storage === mutable.scope(\.left).storage)
    }
}
