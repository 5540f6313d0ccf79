import Foundation
import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("share")
struct ShareTests {
    /// A cold stream over `subject` that counts its subscriptions and cancellations.
    private func counted(_ subject: PublishSubject<Int>) -> (Observable<Int>, Shared<Int>, Shared<Int>) {
        let subscribed = Shared(0)
        let cancelled = Shared(0)
        let source = Observable<Int> { observer in
            subscribed.value += 1
            let inner = subject.subscribe(observer)
            return Subscription {
                cancelled.value += 1
                inner.cancel()
            }
        }
        return (source, subscribed, cancelled)
    }

    @Test("share makes one upstream subscription for many observers")
    func oneUpstream() {
        let subject = PublishSubject<Int>()
        let (source, subscribed, _) = counted(subject)
        let shared = source.share()
        let first = Recorder(shared)
        let second = Recorder(shared)
        let third = Recorder(shared)
        subject.send(1)
        #expect(subscribed.value == 1)
        #expect(first.values == [1] && second.values == [1] && third.values == [1])
    }

    @Test("share replays the last values to a late observer", arguments: [0, 1, 2, 5])
    func replays(count: Int) {
        let subject = PublishSubject<Int>()
        let shared = subject.share(replay: count)
        let first = Recorder(shared)
        for value in 1...3 { subject.send(value) }
        let late = Recorder(shared)
        subject.send(4)
        #expect(first.values == [1, 2, 3, 4])
        #expect(late.values == Array([1, 2, 3].suffix(count)) + [4])
    }

    @Test("share disconnects when the last observer leaves, and reconnects with an empty buffer")
    func reconnects() {
        let subject = PublishSubject<Int>()
        let (source, subscribed, cancelled) = counted(subject)
        let shared = source.share(replay: 1)
        let first = Recorder(shared)
        let second = Recorder(shared)
        subject.send(1)
        first.cancel()
        #expect(cancelled.value == 0)
        second.cancel()
        #expect(cancelled.value == 1)
        let third = Recorder(shared)
        #expect(subscribed.value == 2)
        #expect(third.values.isEmpty, "a new connection starts with an empty replay buffer")
        subject.send(2)
        #expect(third.values == [2])
    }

    @Test("share keeps delivering when the shared stream itself is not kept")
    func sharedStreamNotKept() {
        // `source.share().observe { … }` is the common one-line use: the Observable that `share` returns is
        // a temporary, and only the subscription is kept.
        let subject = PublishSubject<Int>()
        let seen = Shared<[Int]>([])
        let subscription = subject.map { $0 * 2 }.share(replay: 1).observe { seen.value.append($0) }
        subject.send(1)
        subject.send(2)
        #expect(seen.value == [2, 4])
        withExtendedLifetime(subscription) {}
    }

    @Test("share passes completion to every observer, and a later observer starts a new connection")
    func completion() {
        let subject = PublishSubject<Int>()
        let (source, subscribed, _) = counted(subject)
        let shared = source.share(replay: 1)
        let first = Recorder(shared)
        let second = Recorder(shared)
        subject.send(1)
        subject.complete()
        #expect(first.events == [.next(1), .completed])
        #expect(second.events == [.next(1), .completed])
        let third = Recorder(shared)
        #expect(subscribed.value == 2)
        #expect(third.events == [.completed], "the subject has completed, so the new connection completes")
    }

    // The scenarios below keep the shared stream in a local: see `sharedStreamNotKept` for what happens
    // when only the subscription is kept.

    @Test("share completes without values when the source is empty")
    func empty() {
        let shared = Observable<Int>.empty().share(replay: 1)
        #expect(Recorder(shared).events == [.completed])
    }

    @Test("share passes the error on to every observer when the source fails")
    func error() {
        let subject = PublishSubject<Int>()
        let shared = subject.share(replay: 2)
        let first = Recorder(shared)
        let second = Recorder(shared)
        subject.send(1)
        subject.fail(TestError(code: 7))
        #expect(first.events == [.next(1), .error(TestError(code: 7))])
        #expect(second.events == first.events)
    }

    @Test("share stops delivering to an observer cancelled mid-stream, and keeps delivering to the others")
    func cancel() {
        let subject = PublishSubject<Int>()
        let shared = subject.share()
        let leaving = Recorder(shared)
        let staying = Recorder(shared)
        subject.send(1)
        leaving.cancel()
        subject.send(2)
        subject.complete()
        #expect(leaving.events == [.next(1)])
        #expect(staying.events == [.next(1), .next(2), .completed])
    }

    @Test("share replays a synchronous source to the first observer and runs it again for a later one")
    func synchronousSource() {
        let runs = Shared(0)
        let source = Observable<Int>.create { emitter in
            runs.value += 1
            emitter.send(runs.value)
            emitter.complete()
            return .empty
        }
        let shared = source.share(replay: 1)
        #expect(Recorder(shared).events == [.next(1), .completed])
        #expect(Recorder(shared).events == [.next(2), .completed])
    }

    @Test("share releases what its observers captured when they leave")
    func releasesObservers() {
        let subject = PublishSubject<Int>()
        let shared = subject.share(replay: 1)
        var token: Token? = Token()
        weak let weakToken = token
        let first = shared.observe { [token] _ in _ = token }
        let second = shared.observe { [token] _ in _ = token }
        token = nil
        subject.send(1)
        first.cancel()
        #expect(weakToken != nil)
        second.cancel()
        #expect(weakToken == nil)
    }

    @Test("share releases what the upstream chain captured once the shared stream and its observers are gone",
          arguments: Ending.allCases)
    func releasesUpstream(ending: Ending) {
        let subject = PublishSubject<Int>()
        var token: Token? = Token()
        weak let weakToken = token
        var shared: Observable<Int>? = subject.map { [token] in $0 + token!.id }.share(replay: 1)
        token = nil
        var first: Subscription? = shared!.observe { _ in }
        var second: Subscription? = shared!.observe { _ in }
        subject.send(1)
        shared = nil
        switch ending {
        case .cancel: first?.cancel(); second?.cancel()
        case .complete: subject.complete()
        case .fail: subject.fail(TestError())
        case .release: first = nil; second = nil
        }
        #expect(weakToken == nil)
        withExtendedLifetime((first, second, shared)) {}
    }

    @Test("share with a negative replay count stops the process with a message naming the argument")
    func negativeReplay() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PublishSubject<Int>().share(replay: -1)
        }
        #if DEBUG
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("share(replay:)"), "message: \(message)")
        #endif
    }
}
