import Dispatch
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("Subscription")
struct SubscriptionTests {
    @Test("cancel runs the cancellation once however often it is called")
    func cancelOnce() {
        let runs = Shared(0)
        let subscription = Subscription { runs.value += 1 }
        #expect(!subscription.isCancelled)
        subscription.cancel()
        subscription.cancel()
        #expect(subscription.isCancelled)
        #expect(runs.value == 1)
    }

    @Test("empty is one shared subscription, already cancelled, and cancelling it does nothing")
    func empty() {
        let empty = Subscription.empty
        #expect(empty === Subscription.empty)
        #expect(empty.isCancelled)
        empty.cancel()
        #expect(empty.isCancelled)
        var set: Set<Subscription> = []
        empty.store(in: &set)
        Subscription.empty.store(in: &set)
        #expect(set.count == 1)
    }

    @Test("a subscription cancels itself when released")
    func cancelsWhenReleased() {
        let runs = Shared(0)
        var subscription: Subscription? = Subscription { runs.value += 1 }
        #expect(runs.value == 0)
        subscription = nil
        #expect(runs.value == 1)
        withExtendedLifetime(subscription) {}
    }

    @Test("a released subscription stops delivery")
    func releasedStopsDelivery() {
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        var subscription: Subscription? = subject.observe { seen.value.append($0) }
        subject.send(1)
        subscription = nil
        subject.send(2)
        #expect(seen.value == [1])
        withExtendedLifetime(subscription) {}
    }

    @Test("a subscription built from children cancels all of them")
    func childrenCancelTogether() {
        let runs = Shared(0)
        let children = (0..<3).map { _ in Subscription { runs.value += 1 } }
        let parent = Subscription(children)
        parent.cancel()
        #expect(runs.value == 3)
        #expect(children.allSatisfy { $0.isCancelled })
    }

    @Test("empty is already cancelled")
    func emptyIsCancelled() {
        #expect(Subscription.empty.isCancelled)
    }

    @Test("a subscription equals only itself")
    func identity() {
        let a = Subscription {}
        let b = Subscription {}
        #expect(a == a)
        #expect(a != b)
        #expect(Set([a, b, a]).count == 2)
    }

    @Test("store(in:) keeps the subscription alive in a set until the set lets it go")
    func storeInSet() {
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        var set = Set<Subscription>()
        subject.observe { seen.value.append($0) }.store(in: &set)
        subject.send(1)
        #expect(set.count == 1)
        set.removeAll()
        subject.send(2)
        #expect(seen.value == [1])
    }

    @Test("store(in:) keeps the subscription alive in a bag until the bag cancels it")
    func storeInBag() {
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        let bag = SubscriptionBag()
        subject.observe { seen.value.append($0) }.store(in: bag)
        subject.send(1)
        #expect(bag.count == 1)
        bag.cancelAll()
        subject.send(2)
        #expect(seen.value == [1])
    }

    @Test("cancelling releases what the observer captured, while the subscription object still lives")
    func cancelReleasesCaptures() {
        let subject = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        let subscription = subject.observe { [token] _ in _ = token }
        token = nil
        #expect(weakToken != nil)
        subscription.cancel()
        #expect(weakToken == nil)
        withExtendedLifetime(subscription) {}
    }

    // MARK: Cancellation guarantees

    @Test("an observer that cancels its own subscription mid-delivery receives nothing after")
    func selfCancelMidDelivery() {
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        let subscription = Shared<Subscription?>(nil)
        subscription.value = subject.observe { value in
            seen.value.append(value)
            if value == 1 {
                subject.send(2)          // queued behind the current delivery
                subscription.value?.cancel()
            }
        }
        subject.send(1)
        subject.send(3)
        #expect(seen.value == [1])
    }

    @Test("an observer cancelled by another observer during a delivery does not receive that event")
    func cancelledByPeer() {
        let subject = PublishSubject<Int>()
        let seenByB = Shared<[Int]>([])
        let b = Shared<Subscription?>(nil)
        let a = subject.observe { value in
            if value == 2 { b.value?.cancel() }
        }
        b.value = subject.observe { seenByB.value.append($0) }
        subject.send(1)
        subject.send(2)
        subject.send(3)
        #expect(seenByB.value == [1])
        withExtendedLifetime(a) {}
    }

    @Test("subscribing and cancelling while other threads send does not crash and loses no events of live observers")
    func subscribeCancelDuringSends() {
        let subject = PublishSubject<Int>()
        let steady = Shared(0)
        let detector = OverlapDetector()
        let keeper = subject.observe { _ in detector.enter { steady.value += 1 } }
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            if lane < 2 {
                for value in 0..<5_000 { subject.send(value) }
            } else {
                for _ in 0..<2_000 {
                    let subscription = subject.observe { _ in }
                    if lane == 3 { subject.send(-1) }
                    subscription.cancel()
                }
            }
        }
        #expect(steady.value == 10_000 + 2_000)
        #expect(detector.overlaps == 0)
        withExtendedLifetime(keeper) {}
    }

    @Test("cancel from several threads at once runs the cancellation once")
    func concurrentCancel() {
        for _ in 0..<200 {
            let runs = Shared(0)
            let lock = OverlapDetector()
            let subscription = Subscription { lock.enter { runs.value += 1 } }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in subscription.cancel() }
            #expect(runs.value == 1)
        }
    }
}
