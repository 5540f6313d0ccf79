import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

/// A note stamped by its reduce with an id and a date from the dependencies.
struct StampedNote: Equatable, Sendable {
    var id: UUID
    var created: Date
}

enum NoteAction: EffectAction, Equatable {
    case add, addLater

    func reduce(into notes: inout [StampedNote], dependencies: Dependencies) -> Effect<NoteAction> {
        notes.append(StampedNote(id: dependencies.uuid(), created: dependencies.date.now))
        return self == .addLater ? .send(.add) : .none
    }
}

private func uuid(_ count: Int) -> UUID {
    UUID(uuidString: String(format: "00000000-0000-0000-0000-%012X", count))!
}

@Suite("Dependencies read by a reduce")
struct ReducerDependencyTests {
    @Test("a store hands its dependencies to the reduce, and to the reduce of what the effect sent")
    func storeDependencies() {
        let store = Store([StampedNote](), dependencies: Dependencies {
            $0.uuid = .incrementing
            $0.date = .constant(Date(timeIntervalSince1970: 100))
        })
        store.dispatch(NoteAction.addLater)
        #expect(store.state.value == [StampedNote(id: uuid(0), created: Date(timeIntervalSince1970: 100)),
                                      StampedNote(id: uuid(1), created: Date(timeIntervalSince1970: 100))])
    }

    @Test("a TestStore fixes the date and counts ids from zero, each test store on its own")
    func testStoreFixes() async {
        for _ in 0..<2 {
            let store = TestStore(initialState: [StampedNote](), actions: NoteAction.self)
            await store.send(.add) { $0.append(StampedNote(id: uuid(0), created: Date(timeIntervalSince1970: 0))) }
            await store.send(.addLater) { $0.append(StampedNote(id: uuid(1), created: Date(timeIntervalSince1970: 0))) }
            await store.receive(.add) { $0.append(StampedNote(id: uuid(2), created: Date(timeIntervalSince1970: 0))) }
            await store.finish()
        }
    }

    @Test("a test overrides a fixed dependency")
    func testStoreOverride() async {
        let store = TestStore(initialState: [StampedNote](), actions: NoteAction.self) {
            $0.date = .constant(Date(timeIntervalSince1970: 7))
        }
        await store.send(.add) { $0.append(StampedNote(id: uuid(0), created: Date(timeIntervalSince1970: 7))) }
    }

    @Test("the live generators give new ids and the real date")
    func live() {
        let dependencies = Dependencies()
        #expect(dependencies.uuid() != dependencies.uuid())
        #expect(abs(dependencies.date.now.timeIntervalSinceNow) < 60)
    }

    @Test("an incrementing generator hands out each id once across threads")
    func incrementingIsShared() async {
        let generator = UUIDGenerator.incrementing
        let ids = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<4 { group.addTask { (0..<250).map { _ in generator() } } }
            return await group.reduce(into: [UUID]()) { $0 += $1 }
        }
        #expect(Set(ids) == Set((0..<1000).map(uuid)))
    }

    @Test("reduce(into:) outside a store reads the default dependencies; an action with only reduce(into:) still works")
    func defaults() {
        var notes: [StampedNote] = []
        _ = NoteAction.add.reduce(into: &notes)
        #expect(notes.count == 1)
        let store = Store(EffectLog())
        store.dispatch(Step("plain") { .send(Step("sent")) })
        #expect(store.state.value.log == ["plain", "sent"])
    }
}
