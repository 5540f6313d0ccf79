import Foundation
import Testing
@testable import Stillwater

/// `Resources.liveSubscriptions` is process-wide and Swift Testing runs tests in parallel, so every check
/// of it runs inside an exit test: a fresh process where nothing else subscribes.
@Suite("Resources")
struct ResourcesTests {
    @Test("the live-subscription count returns to its start after every chain ends", arguments: Ending.allCases)
    func countReturnsToStart(ending: Ending) async {
        let result: ExitTest.Result?
        switch ending {
        case .cancel:
            result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                LeakScenarios.runAll(.cancel)
            }
        case .complete:
            result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                LeakScenarios.runAll(.complete)
            }
        case .fail:
            result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                LeakScenarios.runAll(.fail)
            }
        case .release:
            result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                LeakScenarios.runAll(.release)
            }
        }
        let report = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(!report.contains("leak"), "\(report)")
    }

    @Test("the live-subscription count rises while subscribed and falls with each cancellation")
    func countFollowsSubscriptions() async {
        await #expect(processExitsWith: .success) {
            guard Resources.liveSubscriptions == 0 else { exit(2) }
            let subject = PublishSubject<Int>()
            let first = subject.observe { _ in }
            let second = subject.map { $0 }.observe { _ in }
            guard Resources.liveSubscriptions == 2 else { exit(3) }
            first.cancel()
            guard Resources.liveSubscriptions == 1 else { exit(4) }
            second.cancel()
            guard Resources.liveSubscriptions == 0 else { exit(5) }
        }
    }

    @Test("a scope or binding that is held but not observed is not a live subscription; its observers are")
    func heldScopesAreNotCounted() async {
        await #expect(processExitsWith: .success) {
            struct Form { var name = ""; var age = 0 }
            let form = MutableProperty(Form())
            let name = form.scope(\.name)
            let age = form.binding(\.age)
            let store = Store(Form())
            let storeName = store.scope(\.name)
            guard Resources.liveSubscriptions == 0 else { exit(2) }
            let first = name.observe { _ in }
            let second = age.observe { _ in }
            let third = storeName.observe { _ in }
            guard Resources.liveSubscriptions == 3 else { exit(3) }
            first.cancel()
            second.cancel()
            third.cancel()
            guard Resources.liveSubscriptions == 0 else { exit(4) }
            withExtendedLifetime((name, age, storeName)) {}
            // A scope of a derived property keeps the derived property observed while it is held: the
            // graph's one observer of the root counts, until the scope is released.
            var derivedScope: Property<Int>? = form.map { $0.age + 1 }.scope(\.self)
            guard Resources.liveSubscriptions == 1 else { exit(5) }
            derivedScope = nil
            guard Resources.liveSubscriptions == 0 else { exit(6) }
            withExtendedLifetime(derivedScope) {}
        }
    }
}

/// The chains whose subscriptions the exit tests count.
enum LeakScenarios {
    /// Builds each chain, checks it is counted, ends it as `ending` says, and exits with failure (naming
    /// the leaking chains on standard error) unless the count is back to where it started.
    static func runAll(_ ending: Ending) {
        var leaks: [String] = []
        for (name, scenario) in scenarios {
            let before = Resources.liveSubscriptions
            let during = scenario(ending)
            let after = Resources.liveSubscriptions
            if during <= before { leaks.append("\(name): not counted while live (\(before) -> \(during))") }
            if after != before { leaks.append("\(name): leak after \(ending), \(before) -> \(after)") }
        }
        if Resources.liveSubscriptions != 0 { leaks.append("leak: \(Resources.liveSubscriptions) live at the end") }
        if !leaks.isEmpty {
            FileHandle.standardError.write(Data(leaks.joined(separator: "\n").utf8))
            exit(1)
        }
    }

    /// Each scenario builds a chain over fresh sources, sends a little, ends it, and returns the count
    /// while the chain was live.
    static var scenarios: [(String, (Ending) -> Int)] { [
        ("map-filter-distinct", { ending in
            let subject = PublishSubject<Int>()
            var subscription: Subscription? = subject.map { $0 + 1 }.filter { $0 > 0 }.distinctUntilChanged()
                .observe { _ in }
            subject.send(1)
            let during = Resources.liveSubscriptions
            end(ending, subscription: &subscription, sources: [subject])
            return during
        }),
        ("take", { ending in
            let subject = PublishSubject<Int>()
            var subscription: Subscription? = subject.take(5).observe { _ in }
            subject.send(1)
            let during = Resources.liveSubscriptions
            end(ending, subscription: &subscription, sources: [subject])
            return during
        }),
        ("take-to-count", { _ in
            let subject = PublishSubject<Int>()
            let subscription = subject.take(2).observe { _ in }
            subject.send(1)
            let during = Resources.liveSubscriptions
            subject.send(2)
            withExtendedLifetime(subscription) {}
            return during
        }),
        ("merge", { ending in
            let a = PublishSubject<Int>()
            let b = PublishSubject<Int>()
            var subscription: Subscription? = a.merge(with: b).observe { _ in }
            a.send(1)
            b.send(2)
            let during = Resources.liveSubscriptions
            end(ending, subscription: &subscription, sources: [a, b])
            return during
        }),
        ("combineLatest", { ending in
            let a = PublishSubject<Int>()
            let b = BehaviorSubject(0)
            var subscription: Subscription? = Observable.combineLatest(a, b).observe { _ in }
            a.send(1)
            let during = Resources.liveSubscriptions
            end(ending, subscription: &subscription, sources: [a], behavior: [b])
            return during
        }),
        ("flatMapLatest", { ending in
            let outer = PublishSubject<Int>()
            let inner = PublishSubject<Int>()
            var subscription: Subscription? = outer.flatMapLatest { _ in inner }.observe { _ in }
            outer.send(1)
            outer.send(2)
            inner.send(3)
            let during = Resources.liveSubscriptions
            end(ending, subscription: &subscription, sources: [outer, inner])
            return during
        }),
        ("share", { ending in
            let subject = PublishSubject<Int>()
            let shared = subject.map { $0 }.share(replay: 1)
            var first: Subscription? = shared.observe { _ in }
            let second = shared.observe { _ in }
            subject.send(1)
            let during = Resources.liveSubscriptions
            second.cancel()
            end(ending, subscription: &first, sources: [subject])
            return during
        }),
        ("create", { ending in
            let emitter = Shared<Emitter<Int>?>(nil)
            var subscription: Subscription? = Observable<Int>.create { e in
                emitter.value = e
                return .empty
            }.observe { _ in }
            emitter.value?.send(1)
            let during = Resources.liveSubscriptions
            switch ending {
            case .cancel: subscription?.cancel()
            case .complete: emitter.value?.complete()
            case .fail: emitter.value?.fail(TestError())
            case .release: subscription = nil
            }
            return during
        }),
        ("replay-and-relays", { ending in
            let replay = ReplaySubject<Int>(bufferSize: 2)
            let relay = PublishRelay<Int>()
            let current = BehaviorRelay(0)
            var subscription: Subscription? = Subscription([
                replay.observe { _ in }, relay.observe { _ in }, current.observe { _ in },
            ])
            replay.send(1)
            relay.accept(1)
            current.accept(1)
            let during = Resources.liveSubscriptions
            switch ending {
            case .cancel, .complete, .fail: subscription?.cancel()   // relays never end
            case .release: subscription = nil
            }
            return during
        }),
    ] }

    static func end(
        _ ending: Ending, subscription: inout Subscription?, sources: [PublishSubject<Int>],
        behavior: [BehaviorSubject<Int>] = []
    ) {
        switch ending {
        case .cancel: subscription?.cancel()
        case .complete:
            for source in sources { source.complete() }
            for source in behavior { source.complete() }
        case .fail:
            sources.first?.fail(TestError())
        case .release: subscription = nil
        }
    }
}
