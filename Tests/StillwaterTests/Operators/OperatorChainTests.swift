import Testing
@testable import Stillwater

/// Lifetimes of a whole chain: every closure of map -> filter -> distinctUntilChanged -> observe captures
/// its own object, and each must be freed when the subscription ends.
@Suite("Operator chains")
struct OperatorChainTests {
    @Test("a map, filter, distinctUntilChanged, observe chain releases every capture when it ends",
          arguments: Ending.allCases)
    func chainReleases(ending: Ending) {
        let subject = PublishSubject<Int>()
        var tokens: [Token]? = (0..<4).map(Token.init)
        let weakTokens = tokens!.map { WeakBox($0) }
        let seen = Shared<[Int]>([])
        var subscription: Subscription? = subject
            .map { [t = tokens![0]] in $0 * 2 + t.id }
            .filter { [t = tokens![1]] in $0 > t.id }
            .distinctUntilChanged(by: { [t = tokens![2]] in $0 == $1 && t.id == 2 })
            .observe { [t = tokens![3]] in seen.value.append($0 + t.id * 0) }
        tokens = nil
        for value in [0, 1, 1, 2] { subject.send(value) }
        #expect(seen.value == [2, 4])
        #expect(weakTokens.allSatisfy { $0.object != nil })
        switch ending {
        case .cancel: subscription?.cancel()
        case .complete: subject.complete()
        case .fail: subject.fail(TestError())
        case .release: subscription = nil
        }
        for (index, box) in weakTokens.enumerated() {
            #expect(box.object == nil, "the object captured by closure \(index) is still alive")
        }
        withExtendedLifetime(subscription) {}
    }

    @Test("a subject dropped by its owner is freed once its subscriptions end")
    func subjectFreed() {
        var subject: PublishSubject<Int>? = PublishSubject()
        weak let weakSubject = subject
        let subscription = subject!.map { $0 }.observe { _ in }
        subject = nil
        subscription.cancel()
        #expect(weakSubject == nil)
    }
}

/// A weak reference, so a list of them can be kept.
struct WeakBox<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}
