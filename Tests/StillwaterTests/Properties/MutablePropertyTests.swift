import Dispatch
import Testing
import StillwaterTesting
@testable import Stillwater

@Suite("MutableProperty")
struct MutablePropertyTests {
    @Test("a subscriber receives the current value first, then every change")
    func currentThenChanges() {
        let property = MutableProperty(1)
        let recorder = Recorder(property)
        property.value = 2
        property.value = 3
        #expect(recorder.values == [1, 2, 3])
    }

    @Test("changes delivers only later changes")
    func changesOnlyLater() {
        let property = MutableProperty("a")
        let recorder = Recorder(property.changes)
        #expect(recorder.values.isEmpty)
        property.value = "b"
        #expect(recorder.values == ["b"])
    }

    @Test("setting an equal value still notifies the root's observers")
    func equalSetNotifies() {
        let property = MutableProperty(5)
        let recorder = Recorder(property)
        property.value = 5
        #expect(recorder.values == [5, 5])
    }

    @Test("modify changes the value in place and returns the body's result")
    func modifyReturnsResult() {
        let property = MutableProperty([1, 2])
        let recorder = Recorder(property)
        let count = property.modify { list -> Int in
            list.append(3)
            return list.count
        }
        #expect(count == 3)
        #expect(property.value == [1, 2, 3])
        #expect(recorder.values == [[1, 2], [1, 2, 3]])
    }

    @Test("modify from 4 threads x 25 000 increments ends at exactly 100 000")
    func concurrentModify() {
        let property = MutableProperty(0)
        let seen = Counter()
        let subscription = property.changes.observe { _ in seen.value += 1 }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<25_000 { property.modify { $0 += 1 } }
        }
        #expect(property.value == 100_000)
        #expect(seen.value == 100_000)
        subscription.cancel()
    }

    @Test("observers see strictly increasing values when writes come from several threads")
    func concurrentOrder() {
        let property = MutableProperty(0)
        let first = Box<[Int]>([])
        let second = Box<[Int]>([])
        let a = property.changes.observe { first.value.append($0) }
        let b = property.changes.observe { second.value.append($0) }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<2_500 { property.modify { $0 += 1 } }
        }
        // Compare whole arrays without printing 10 000 numbers on failure.
        #expect(first.value.count == 10_000)
        #expect(first.value == Array(1...10_000), "values out of order")
        #expect(second.value == first.value, "observers saw different orders")
        a.cancel()
        b.cancel()
    }

    @Test("a write from inside an observer is stored at once and delivered after every observer saw the current value")
    func reentrantWrite() {
        let property = MutableProperty(0)
        let log = Box<[String]>([])
        let readInside = Box<[Int]>([])
        let a = property.observe { value in
            log.value.append("A\(value)")
            if value < 2 {
                property.value = value + 1
                readInside.value.append(property.value)
            }
        }
        let b = property.observe { log.value.append("B\($0)") }
        // B subscribed after A's reentrant writes had been delivered, so start the sequence now.
        log.value = []
        property.value = 0
        #expect(log.value == ["A0", "B0", "A1", "B1", "A2", "B2"])
        #expect(readInside.value.suffix(2) == [1, 2])
        a.cancel()
        b.cancel()
    }

    @Test("a modify from inside an observer is queued like any write")
    func reentrantModify() {
        let property = MutableProperty(0)
        let seen = Box<[Int]>([])
        let subscription = property.observe { value in
            seen.value.append(value)
            if value < 3 { property.modify { $0 += 1 } }
        }
        #expect(seen.value == [0, 1, 2, 3])
        subscription.cancel()
    }

    @Test("a property with live scopes and observers is freed when the last reference and subscription go")
    func propertyFreed() {
        weak var weakStorage: AnyObject?
        weak var weakScope: AnyObject?
        do {
            let property = MutableProperty(Pair(left: 0, right: 0))
            weakStorage = property.storage
            let scope = property.scope(\.left)
            weakScope = scope.storage
            let s1 = scope.observe { _ in }
            let s2 = property.observe { _ in }
            property.value.left = 1
            s1.cancel()
            s2.cancel()
        }
        #expect(weakStorage == nil)
        #expect(weakScope == nil)
    }

    @Test("a property released while subscribed keeps delivering to its live subscription")
    func subscriptionKeepsScopeAlive() {
        let property = MutableProperty(Pair(left: 0, right: 0))
        let recorder = Recorder(property.scope(\.left))
        property.value.left = 7
        #expect(recorder.values == [0, 7])
    }

    @Test("bind(to:) writes each value of a stream into the property")
    func bindToProperty() {
        let input = PublishSubject<String>()
        let title = MutableProperty("")
        let binding = input.bind(to: title)
        input.send("Inbox")
        #expect(title.value == "Inbox")
        binding.cancel()
        input.send("Archive")
        #expect(title.value == "Inbox")
    }

    @Test("a property binds into a relay")
    func propertyIntoRelay() {
        let property = MutableProperty(1)
        let relay = BehaviorRelay(0)
        let binding = property.bind(to: relay)
        property.value = 2
        #expect(relay.value == 2)
        binding.cancel()
    }
}

struct Pair: Equatable {
    var left: Int
    var right: Int
}

final class Counter: @unchecked Sendable {
    var value = 0
}

final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
