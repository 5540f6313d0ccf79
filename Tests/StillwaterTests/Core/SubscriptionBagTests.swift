import Dispatch
import Testing
@testable import Stillwater

@Suite("SubscriptionBag")
struct SubscriptionBagTests {
    @Test("cancelAll cancels every subscription and empties the bag")
    func cancelAll() {
        let bag = SubscriptionBag()
        let runs = Shared(0)
        for _ in 0..<3 { Subscription { runs.value += 1 }.store(in: bag) }
        #expect(bag.count == 3)
        bag.cancelAll()
        #expect(runs.value == 3)
        #expect(bag.count == 0)
    }

    @Test("the bag can be filled again after cancelAll")
    func refill() {
        let bag = SubscriptionBag()
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        subject.observe { seen.value.append($0) }.store(in: bag)
        bag.cancelAll()
        subject.observe { seen.value.append($0 * 10) }.store(in: bag)
        subject.send(1)
        #expect(seen.value == [10])
        #expect(bag.count == 1)
    }

    @Test("releasing the bag cancels what it holds")
    func releaseCancels() {
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        var bag: SubscriptionBag? = SubscriptionBag()
        subject.observe { seen.value.append($0) }.store(in: bag!)
        subject.send(1)
        bag = nil
        subject.send(2)
        #expect(seen.value == [1])
        withExtendedLifetime(bag) {}
    }

    @Test("insert and cancelAll from several threads keep every subscription accounted for")
    func concurrentUse() {
        let bag = SubscriptionBag()
        let runs = AtomicCounter()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<500 { Subscription { runs.increment() }.store(in: bag) }
        }
        #expect(bag.count == 2_000)
        bag.cancelAll()
        #expect(runs.value == 2_000)
    }
}
