import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

/// A note a child stamps with an id and a date from the dependencies, in its reduce or in its effect.
struct Stamp: Equatable, Sendable {
    var id: UUID
    var at: Date
}

struct Card: Identifiable, Equatable, Sendable {
    var id: Int
    var stamps: [Stamp] = []
    var ticks = 0
}

enum CardAction: EffectAction, Equatable, Sendable {
    case stamp, fetch, fetched(Stamp), wait, ticked

    func reduce(into card: inout Card, dependencies: Dependencies) -> Effect<CardAction> {
        switch self {
        case .stamp:
            card.stamps.append(Stamp(id: dependencies.uuid(), at: dependencies.date.now))
            return .none
        case .fetch:
            return .run { send, dependencies in
                send(.fetched(Stamp(id: dependencies.uuid(), at: dependencies.date.now)))
            }
        case .fetched(let stamp):
            card.stamps.append(stamp)
            return .none
        case .wait:
            return .stream { dependencies in
                Observable.timer(.seconds(1), scheduler: dependencies.scheduler).map { _ in CardAction.ticked }
            }
        case .ticked:
            card.ticks += 1
            return .none
        }
    }
}

/// A parent that reaches its children the short way, passing no dependencies.
struct Desk: Equatable, Sendable {
    var cards = [Card(id: 1), Card(id: 2)]
    var detail: Card? = Card(id: 9)
}

enum DeskAction: EffectAction, Equatable, Sendable {
    case card(Int, CardAction), detail(CardAction), pinned(Int, CardAction)

    func reduce(into desk: inout Desk) -> Effect<DeskAction> {
        switch self {
        case .card(let id, let action):
            return .forEach(\.cards, id: id, action, in: &desk) { .card(id, $0) }
        case .detail(let action):
            return .ifLet(\.detail, action, in: &desk) { .detail($0) }
        case .pinned(let id, let action):
            // The same children, with one key changed for their subtree.
            return .forEach(\.cards, id: id, action, in: &desk, dependencies: {
                $0.date = .constant(Date(timeIntervalSince1970: 7))
            }) { .pinned(id, $0) }
        }
    }
}

private func uuid(_ count: Int) -> UUID {
    UUID(uuidString: String(format: "00000000-0000-0000-0000-%012X", count))!
}

private let epoch = Date(timeIntervalSince1970: 0)

@Suite("Child features read their store's dependencies")
struct ChildDependencyTests {
    @Test("children reached through forEach and ifLet read the test store's uuid, date and scheduler when the parent passes nothing")
    func testStoreReachesChildren() async {
        let store = TestStore(initialState: Desk(), actions: DeskAction.self)
        await store.send(.card(2, .stamp)) { $0.cards[1].stamps = [Stamp(id: uuid(0), at: epoch)] }
        await store.send(.detail(.stamp)) { $0.detail?.stamps = [Stamp(id: uuid(1), at: epoch)] }
        await store.send(.card(1, .fetch))
        await store.receive(.card(1, .fetched(Stamp(id: uuid(2), at: epoch)))) {
            $0.cards[0].stamps = [Stamp(id: uuid(2), at: epoch)]
        }
        await store.send(.detail(.fetch))
        await store.receive(.detail(.fetched(Stamp(id: uuid(3), at: epoch)))) {
            $0.detail?.stamps.append(Stamp(id: uuid(3), at: epoch))
        }
        // The children's timers wait on the test's virtual clock.
        await store.send(.card(1, .wait))
        await store.send(.detail(.wait))
        store.scheduler.advance(by: .seconds(1))
        await store.receive(.card(1, .ticked)) { $0.cards[0].ticks = 1 }
        await store.receive(.detail(.ticked)) { $0.detail?.ticks = 1 }
        await store.finish()
    }

    @Test("a parent's override of one key reaches the child's reduce and its effects, and only that key")
    func overrideForTheSubtree() async {
        let store = TestStore(initialState: Desk(), actions: DeskAction.self)
        let pinned = Date(timeIntervalSince1970: 7)
        await store.send(.pinned(1, .stamp)) { $0.cards[0].stamps = [Stamp(id: uuid(0), at: pinned)] }
        await store.send(.pinned(1, .fetch))
        await store.receive(.pinned(1, .fetched(Stamp(id: uuid(1), at: pinned)))) {
            $0.cards[0].stamps.append(Stamp(id: uuid(1), at: pinned))
        }
        // Outside the override the store's date is read again.
        await store.send(.card(1, .stamp)) { $0.cards[0].stamps.append(Stamp(id: uuid(2), at: epoch)) }
        await store.finish()
    }

    @Test("a child's reduce called by a parent's reduce reads the store's dependencies")
    func manualChildReduce() {
        enum Parent: EffectAction {
            case card(CardAction)
            func reduce(into card: inout Card) -> Effect<Parent> {
                guard case .card(let action) = self else { return .none }
                return action.reduce(into: &card).map(Parent.card)
            }
        }
        let store = Store(Card(id: 1), dependencies: Dependencies {
            $0.uuid = .incrementing
            $0.date = .constant(Date(timeIntervalSince1970: 3))
        })
        store.dispatch(Parent.card(.stamp))
        #expect(store.state.value.stamps == [Stamp(id: uuid(0), at: Date(timeIntervalSince1970: 3))])
    }
}

/// A draft that saves after a second; its save is cancellable under "save", and a shared save under
/// "shared" across the store.
struct Draft: Identifiable, Equatable, Sendable {
    var id: Int
    var saved = 0
}

enum DraftAction: EffectAction, Equatable, Sendable {
    case save, saveShared, saved, stop

    func reduce(into draft: inout Draft) -> Effect<DraftAction> {
        switch self {
        case .save:
            return Self.later(.saved).cancellable(id: "save", cancelInFlight: true)
        case .saveShared:
            return Self.later(.saved).cancellable(id: "shared", cancelInFlight: true, acrossStore: true)
        case .saved:
            draft.saved += 1
            return .none
        case .stop:
            return .cancel(id: "save")
        }
    }

    static func later(_ action: DraftAction) -> Effect<DraftAction> {
        .stream { dependencies in Observable.timer(.seconds(1), scheduler: dependencies.scheduler).map { _ in action } }
    }
}

enum DraftsAction: EffectAction, Equatable, Sendable {
    case draft(Int, DraftAction), stopShared, stopSave

    func reduce(into drafts: inout [Draft]) -> Effect<DraftsAction> {
        switch self {
        case .draft(let id, let action):
            return .forEach(\.self, id: id, action, in: &drafts) { .draft(id, $0) }
        case .stopShared:
            return .cancel(id: "shared")
        case .stopSave:
            return .cancel(id: "save")
        }
    }
}

@Suite("Cancel ids of child features")
struct ChildCancelIDTests {
    @Test("two rows' saves under one id with cancelInFlight both finish when each row saves")
    func rowsOwnTheirIDs() async {
        let store = TestStore(initialState: [Draft(id: 1), Draft(id: 2)], actions: DraftsAction.self)
        await store.send(.draft(1, .save))
        await store.send(.draft(2, .save))
        store.scheduler.advance(by: .seconds(1))
        await store.receive(.draft(1, .saved)) { $0[0].saved = 1 }
        await store.receive(.draft(2, .saved)) { $0[1].saved = 1 }
        await store.finish()
    }

    @Test("a row's cancel reaches its own save only, and the parent's cancel of the same id reaches neither")
    func cancelStaysInTheRow() async {
        let store = TestStore(initialState: [Draft(id: 1), Draft(id: 2)], actions: DraftsAction.self)
        await store.send(.draft(1, .save))
        await store.send(.draft(2, .save))
        await store.send(.draft(1, .stop))
        await store.send(.stopSave)
        store.scheduler.advance(by: .seconds(1))
        await store.receive(.draft(2, .saved)) { $0[1].saved = 1 }
        await store.finish()
    }

    @Test("an id across the store is shared by the rows and cancelled by the parent")
    func acrossTheStore() async {
        let store = TestStore(initialState: [Draft(id: 1), Draft(id: 2)], actions: DraftsAction.self)
        await store.send(.draft(1, .saveShared))
        await store.send(.draft(2, .saveShared))        // cancels row 1's: the id is the store's
        store.scheduler.advance(by: .seconds(1))
        await store.receive(.draft(2, .saved)) { $0[1].saved = 1 }
        await store.send(.draft(1, .saveShared))
        await store.send(.stopShared)
        store.scheduler.advance(by: .seconds(1))
        await store.finish()
    }
}
