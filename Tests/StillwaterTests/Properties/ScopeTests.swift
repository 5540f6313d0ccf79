import Synchronization
import Testing
import StillwaterTesting
@testable import Stillwater

@Suite("Scope and binding")
struct ScopeTests {
    struct Screen: Equatable {
        var title = "Inbox"
        var unread = 0
    }

    @Test("a scope notifies only when its slice changed")
    func scopeDeduplicates() {
        let screen = MutableProperty(Screen())
        let recorder = Recorder(screen.scope(\.title))
        screen.value.unread = 3
        screen.value.title = "Inbox"
        screen.value.title = "Archive"
        #expect(recorder.values == ["Inbox", "Archive"])
        #expect(screen.scope(\.title).value == "Archive")
    }

    @Test("a scope's value reads the parent's newest value at once")
    func scopeValueIsFresh() {
        let screen = MutableProperty(Screen())
        let unread = screen.scope(\.unread)
        screen.value.unread = 9
        #expect(unread.value == 9)
    }

    @Test("scopes of the same key path share one node")
    func scopesShareNode() {
        let screen = MutableProperty(Screen())
        let first = screen.scope(\.title)
        let second = screen.scope(\.title)
        #expect(first.storage === second.storage)
        #expect(screen.scope(\.unread).storage !== first.storage)
    }

    @Test("scopes of scopes deduplicate at each level")
    func nestedScopes() {
        struct Outer: Equatable { var inner = Screen(); var other = 0 }
        let outer = MutableProperty(Outer())
        let recorder = Recorder(outer.scope(\.inner).scope(\.unread))
        outer.value.other = 1
        outer.value.inner.title = "x"
        outer.value.inner.unread = 2
        #expect(recorder.values == [0, 2])
    }

    @Test("1 000 observers of one scope cost one read of the key path per parent change")
    func oneReadPerChange() {
        let reads = ReadCounter()
        let state = MutableProperty(Counted(reads: reads))
        var subscriptions: [Subscription] = []
        let delivered = Counter()
        for _ in 0..<1_000 {
            subscriptions.append(state.scope(\.tracked).observe { _ in delivered.value += 1 })
        }
        #expect(delivered.value == 1_000)
        let before = reads.count.load(ordering: .relaxed)
        state.value.raw = 1
        state.value.raw = 2
        state.value.raw = 2
        #expect(reads.count.load(ordering: .relaxed) - before == 3)
        #expect(delivered.value == 3_000)
        subscriptions.removeAll()
    }

    @Test("a scope node is freed when nothing uses it, and a new one is made on the next scope")
    func scopeNodeFreed() {
        let screen = MutableProperty(Screen())
        weak var weakNode: AnyObject?
        weak var weakEngine: AnyObject?
        do {
            let scope = screen.scope(\.title)
            weakNode = scope.storage
            weakEngine = (scope.storage as? ScopeStorage<Screen, String>)?.follower
            let subscription = scope.observe { _ in }
            subscription.cancel()
        }
        #expect(weakNode == nil)
        // The parent held the node's engine through its subscription; freeing the node cancels that.
        #expect(weakEngine == nil)
        #expect(screen.storage.scopes.liveCount == 0)
        let recorder = Recorder(screen.scope(\.title))
        screen.value.title = "New"
        #expect(recorder.values == ["Inbox", "New"])
    }

    @Test("writing through a binding changes the parent and notifies the parent's observers")
    func bindingWritesThrough() {
        let screen = MutableProperty(Screen())
        let title = screen.binding(\.title)
        let parent = Recorder(screen.map(\.title))
        title.value = "Drafts"
        #expect(screen.value.title == "Drafts")
        #expect(parent.values == ["Inbox", "Drafts"])
    }

    @Test("a binding's observers are notified only when their slice changed")
    func bindingDeduplicates() {
        let screen = MutableProperty(Screen())
        let unread = screen.binding(\.unread)
        let recorder = Recorder(unread)
        screen.value.title = "Other"
        unread.modify { $0 += 1 }
        unread.value = 1
        #expect(recorder.values == [0, 1])
        #expect(screen.value.unread == 1)
    }

    @Test("a binding of a non-Equatable slice notifies on every parent change")
    func bindingOfNonEquatable() {
        struct Holder { var payload = Payload() }
        struct Payload { var number = 0 }
        let holder = MutableProperty(Holder())
        let payload = holder.binding(\.payload)
        let recorder = Recorder(payload)
        payload.value = Payload(number: 4)
        payload.value = Payload(number: 4)
        #expect(recorder.values.map(\.number) == [0, 4, 4])
        #expect(holder.value.payload.number == 4)
    }

    @Test("two properties bound both ways stay equal without echo loops")
    func bidirectional() {
        let slider = MutableProperty(0.5)
        let field = MutableProperty(0.0)
        let sliderWrites = Recorder(slider.changes)
        let fieldWrites = Recorder(field.changes)
        let link = slider.bindBidirectionally(with: field)
        #expect(field.value == 0.5)
        field.value = 0.8
        #expect(slider.value == 0.8)
        slider.value = 0.1
        #expect(field.value == 0.1)
        #expect(sliderWrites.values == [0.8, 0.1])
        #expect(fieldWrites.values == [0.5, 0.8, 0.1])
        link.cancel()
        field.value = 0.3
        #expect(slider.value == 0.1)
    }
}

/// Counts reads from any thread.
final class ReadCounter: Sendable {
    let count = Atomic<Int>(0)
}

/// A state whose `tracked` property counts how often it is read.
struct Counted: Equatable, Sendable {
    let reads: ReadCounter
    var raw = 0

    var tracked: Int {
        reads.count.add(1, ordering: .relaxed)
        return raw
    }

    static func == (lhs: Counted, rhs: Counted) -> Bool { lhs.raw == rhs.raw }
}
