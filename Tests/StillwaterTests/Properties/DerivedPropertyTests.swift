import Foundation
import Testing
import StillwaterTesting
@testable import Stillwater

/// The search screen of the issue that asked for derived properties: three fields one action changes.
struct SearchState: Equatable {
    var query = ""
    var results: [String] = []
    var isLoading = false
}

enum SearchAction: Action {
    case finished(query: String, results: [String])
    case started(String)

    func reduce(_ state: inout SearchState) {
        switch self {
        case .started(let query):
            state.query = query
            state.isLoading = true
        case .finished(let query, let results):
            state.query = query
            state.results = results
            state.isLoading = false
        }
    }
}

@Suite("Derived properties")
struct DerivedPropertyTests {
    // MARK: map and select

    @Test("map keeps a value and follows its source; an Equatable result is deduplicated")
    func mapFollowsAndDeduplicates() {
        let count = MutableProperty(1)
        let parity = count.map { $0.isMultiple(of: 2) }
        let recorder = Recorder(parity)
        #expect(parity.value == false)
        count.value = 3
        count.value = 4
        count.value = 6
        #expect(parity.value == true)
        #expect(recorder.values == [false, true])
    }

    @Test("map to a non-Equatable value passes every change on")
    func mapNonEquatable() {
        struct Box { var value: Int }
        let count = MutableProperty(1)
        let boxed = count.map { Box(value: $0 % 2) }
        let recorder = Recorder(boxed)
        count.value = 3
        count.value = 3
        #expect(recorder.values.map(\.value) == [1, 1, 1])
        #expect(boxed.value.value == 1)
    }

    @Test("key-path map reads the part and deduplicates it")
    func keyPathMap() {
        let search = MutableProperty(SearchState())
        let query = search.map(\.query)
        let recorder = Recorder(query)
        search.value.isLoading = true
        search.value.query = "a"
        #expect(recorder.values == ["", "a"])
        #expect(query.value == "a")
    }

    @Test("value reads the source's current value even while nobody observes")
    func valueWithoutObservers() {
        let count = MutableProperty(2)
        let doubled = count.map { $0 * 2 }
        count.value = 5
        #expect(doubled.value == 10)
    }

    @Test("a select of a store runs its selector once per new state, however many observers it has")
    func selectComputesOncePerState() {
        let store = Store(SearchState())
        let calls = Counter()
        let count = store.select { state -> Int in
            calls.value += 1
            return state.results.count
        }
        let recorders = (0..<50).map { _ in Recorder(count) }
        let afterSubscribing = calls.value
        #expect(afterSubscribing == 1)
        store.dispatch(SearchAction.finished(query: "a", results: ["x"]))
        store.dispatch(SearchAction.started("b"))
        #expect(calls.value == afterSubscribing + 2)
        for recorder in recorders { #expect(recorder.values == [0, 1]) }
    }

    // MARK: laziness, sharing, release

    @Test("an unobserved derived property computes nothing when its root changes")
    func lazyWhenUnobserved() {
        let root = MutableProperty(0)
        let calls = Counter()
        let derived = root.map { value -> Int in
            calls.value += 1
            return value + 1
        }
        for value in 1...10 { root.value = value }
        #expect(calls.value == 0)
        let recorder = Recorder(derived)
        #expect(calls.value == 1)
        recorder.cancel()
        for value in 11...20 { root.value = value }
        #expect(calls.value == 1)
        #expect(recorder.values == [11])
    }

    @Test("the root has one observer for all its derived properties, and none once they are unobserved")
    func oneRootObserverWhileObserved() async {
        // The count is process-wide and tests run in parallel: checked in a process of its own.
        await #expect(processExitsWith: .success) {
            let root = MutableProperty(0)
            let a = root.map { $0 + 1 }
            let b = root.map { $0 * 2 }
            let c = Property.combine(a, b) { $0 + $1 }
            guard Resources.liveSubscriptions == 0 else { exit(2) }
            let recorders = [Recorder(a), Recorder(b), Recorder(c), Recorder(c)]
            // Four observers plus the graph's one observer of the root.
            guard Resources.liveSubscriptions == 5 else { exit(3) }
            root.value = 3
            guard recorders[2].values == [1, 10] else { exit(4) }
            recorders[0].cancel()
            recorders[2].cancel()
            guard Resources.liveSubscriptions == 3 else { exit(5) }
            for recorder in recorders { recorder.cancel() }
            guard Resources.liveSubscriptions == 0 else { exit(6) }
        }
    }

    @Test("what a derived property captured is freed once it and its subscriptions are gone")
    func releaseOnLastObserver() {
        let root = MutableProperty(1)
        weak var weakToken: Token?
        var recorder: Recorder<Int>?
        do {
            let token = Token(7)
            weakToken = token
            let derived = root.map { $0 + token.id }
            recorder = Recorder(derived)
            root.value = 2
        }
        #expect(weakToken != nil)
        #expect(recorder?.values == [8, 9])
        recorder?.cancel()
        recorder = nil
        #expect(weakToken == nil)
    }

    // MARK: glitch freedom

    @Test("three scopes of one store combined: one dispatch changing all three is one emission")
    func combinedScopesOfOneStore() {
        let store = Store(SearchState())
        let status = Property.combine(store.scope(\.query), store.scope(\.results), store.scope(\.isLoading)) {
            query, results, loading in loading ? "searching \"\(query)\"" : "\(results.count) matches for \"\(query)\""
        }
        let recorder = Recorder(status)
        store.dispatch(SearchAction.started("swi"))
        store.dispatch(SearchAction.finished(query: "swift", results: ["a", "b", "c"]))
        #expect(recorder.values == ["0 matches for \"\"", "searching \"swi\"", "3 matches for \"swift\""])
    }

    @Test("combineLatest of selects of one store never mixes old and new fields")
    func combineLatestOfSelects() {
        let store = Store(SearchState())
        let pair = Property.combineLatest(store.select(\.query.count), store.select(\.results.count))
        let recorder = Recorder(pair)
        for round in 1...20 {
            store.dispatch(SearchAction.finished(query: String(repeating: "q", count: round), results: Array(repeating: "r", count: round)))
        }
        #expect(recorder.values.count == 21)
        for value in recorder.values { #expect(value.0 == value.1) }
    }

    @Test("a diamond A → B, A → C, (B, C) → D emits once per change of A, from A's new value only")
    func diamond() {
        let a = MutableProperty(1)
        let b = a.map { $0 * 10 }
        let c = a.map { $0 + 1 }
        let calls = Counter()
        let d = Property.combine(b, c) { b, c -> String in
            calls.value += 1
            return "\(b)/\(c)"
        }
        let recorder = Recorder(d)
        for value in 2...5 { a.value = value }
        #expect(recorder.values == ["10/2", "20/3", "30/4", "40/5", "50/6"])
        #expect(calls.value == 5)
    }

    @Test("a 3-deep chain and a diamond on top of it emit once per change")
    func deepChainsAndDiamonds() {
        let a = MutableProperty(0)
        let b = a.map { $0 + 1 }
        let c = b.map { $0 * 2 }
        let d = c.map { $0 - 1 }
        let e = Property.combine(b, d) { [$0, $1] }
        let chain = Recorder(d)
        let top = Recorder(e)
        for value in 1...4 { a.value = value }
        #expect(chain.values == [1, 3, 5, 7, 9])
        #expect(top.values == [[1, 1], [2, 3], [3, 5], [4, 7], [5, 9]])
        for pair in top.values { #expect(pair[1] == pair[0] * 2 - 1) }
    }

    @Test("a source that did not change does not make its dependents recompute")
    func unchangedSourcesSkipWork() {
        let store = Store(SearchState())
        let query = store.select(\.query)
        let calls = Counter()
        let shouted = query.map { query -> String in
            calls.value += 1
            return query.uppercased()
        }
        let recorder = Recorder(shouted)
        store.dispatch(SearchAction.finished(query: "", results: ["x"]))
        store.dispatch(SearchAction.started("a"))
        #expect(calls.value == 2)
        #expect(recorder.values == ["", "A"])
    }

    @Test("an observer that reads another derived property of the same root sees the same state")
    func observersReadConsistentValues() {
        let a = MutableProperty(1)
        let b = a.map { $0 * 2 }
        let c = a.map { $0 * 3 }
        let seen = Shared<[String]>([])
        let subscription = b.observe { value in seen.value.append("\(value) \(c.value)") }
        a.value = 2
        a.value = 3
        #expect(seen.value == ["2 3", "4 6", "6 9"])
        subscription.cancel()
    }

    // MARK: several roots

    @Test("sources of different roots: each root change is one step, and value reads the current values")
    func independentRoots() {
        let width = MutableProperty(2)
        let height = MutableProperty(3)
        let area = Property.combine(width, height) { $0 * $1 }
        #expect(area.value == 6)
        let recorder = Recorder(area)
        width.value = 4
        height.value = 5
        height.value = 5
        #expect(recorder.values == [6, 12, 20])
        #expect(area.value == 20)
    }

    @Test("two parts of one root beside a second root: one change of the first root is one step")
    func mixedRoots() {
        let search = MutableProperty(SearchState())
        let page = MutableProperty(1)
        let line = Property.combine(search.scope(\.query), search.scope(\.results), page) { query, results, page in
            "\(query):\(results.count):\(page)"
        }
        let recorder = Recorder(line)
        search.value = SearchState(query: "a", results: ["1", "2"], isLoading: false)
        page.value = 2
        #expect(recorder.values == [":0:1", "a:2:1", "a:2:2"])
    }

    @Test("combineLatest of independent roots starts with both and follows each")
    func combineLatestIndependent() {
        let name = MutableProperty("Ada")
        let age = MutableProperty(36)
        let pair = Property.combineLatest(name, age)
        let recorder = Recorder(pair)
        age.value = 37
        #expect(recorder.values.map { "\($0.0) \($0.1)" } == ["Ada 36", "Ada 37"])
        recorder.cancel()
        name.value = "Grace"
        #expect(pair.value.0 == "Grace")
        let second = Recorder(pair)
        #expect(second.values.map { "\($0.0) \($0.1)" } == ["Grace 37"])
    }

    // MARK: ordering and threads

    @Test("an observer that writes the root from inside a delivery: every value in order, no nesting")
    func reentrantWrites() {
        let root = MutableProperty(0)
        let doubled = root.map { $0 * 2 }
        let detector = OverlapDetector()
        let seen = Shared<[Int]>([])
        let subscription = doubled.observe { value in
            detector.enter {
                seen.value.append(value)
                if value < 10 { root.value = value / 2 + 1 }
            }
        }
        #expect(seen.value == [0, 2, 4, 6, 8, 10])
        #expect(detector.overlaps == 0)
        subscription.cancel()
    }

    @Test("subscribing to a derived property from inside a delivery of its root")
    func subscribeFromInsideDelivery() {
        let root = MutableProperty(1)
        let derived = root.map { $0 + 100 }
        let inner = Shared<Recorder<Int>?>(nil)
        let outer = root.observe { value in
            if value == 2, inner.value == nil { inner.value = Recorder(derived) }
        }
        root.value = 2
        root.value = 3
        #expect(inner.value?.values == [102, 103])
        outer.cancel()
    }

    @Test("writes from 4 threads: a derived observer sees increasing values, one at a time, ending at the last")
    func concurrentWrites() async {
        let root = MutableProperty(0)
        let a = root.map { $0 * 2 }
        let b = root.map { $0 * 3 }
        let both = Property.combine(a, b) { [$0, $1] }
        let detector = OverlapDetector()
        let seen = Shared<[[Int]]>([])
        let subscription = both.observe { value in detector.enter { seen.value.append(value) } }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<2_500 { root.modify { $0 += 1 } }
        }
        #expect(detector.overlaps == 0)
        #expect(seen.value.last == [20_000, 30_000])
        #expect(zip(seen.value, seen.value.dropFirst()).allSatisfy { $0[0] < $1[0] })
        #expect(seen.value.allSatisfy { $0[0] * 3 == $0[1] * 2 })
        subscription.cancel()
    }

    @Test("independent roots written from two threads end at the combination of their last values")
    func concurrentIndependentRoots() {
        let x = MutableProperty(0)
        let y = MutableProperty(0)
        let sum = Property.combine(x, y) { $0 + $1 }
        let detector = OverlapDetector()
        let last = Shared(0)
        let subscription = sum.observe { value in detector.enter { last.value = value } }
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for value in 1...5_000 {
                if index == 0 { x.value = value } else { y.value = value }
            }
        }
        #expect(detector.overlaps == 0)
        #expect(last.value == 10_000)
        #expect(sum.value == 10_000)
        subscription.cancel()
    }
}

@Suite("Derived properties: activation and several roots")
struct DerivedActivationTests {
    @Test("an observer that swaps its subscription from one derived property to another keeps receiving")
    func swapSubscriptionInsideDelivery() {
        let root = MutableProperty(0)
        let a = root.map { $0 + 1 }
        let b = root.map { $0 * 2 }
        let seen = Shared<[Int]>([])
        let held = Shared<Subscription?>(nil)
        held.value = a.observe { value in
            // Subscribes to b first, then cancels a (the assignment releases the old subscription).
            if value == 2 { held.value = b.observe { seen.value.append($0) } }
        }
        root.value = 1
        root.value = 5
        root.value = 7
        #expect(seen.value == [2, 10, 14])
        held.value?.cancel()
    }

    @Test("cancelling one waiting observer beside another waiting cell leaves the other live")
    func cancelWhileWaiting() {
        let root = MutableProperty(0)
        let a = root.map { $0 + 1 }
        let b = root.map { $0 + 2 }
        let seen = Shared<[Int]>([])
        let outer = root.observe { value in
            guard value == 1 else { return }
            let first = a.observe { _ in }
            let second = b.observe { seen.value.append($0) }
            first.cancel()
            seen.value.append(-1)
            keep.value = second
        }
        root.value = 1
        root.value = 3
        #expect(seen.value == [-1, 3, 5])
        outer.cancel()
        keep.value?.cancel()
    }

    @Test("observed again, a combination of two roots starts from both roots' current values")
    func reobservedIndependentRoots() {
        let x = MutableProperty(0)
        let y = MutableProperty(0)
        let pair = Property.combineLatest(x, y)
        let first = Recorder(pair)
        first.cancel()
        y.value = 3
        x.value = 1
        let seen = Shared<[String]>([])
        let held = Shared<Subscription?>(nil)
        let outer = y.observe { value in
            if value == 5, held.value == nil {
                held.value = pair.observe { seen.value.append("\($0.0),\($0.1)") }
            }
        }
        y.value = 5
        // Never "1,0" (a new x with the y from before): only the state that exists. A tuple is not
        // Equatable, so its first value may come twice (once from the start, once from y's turn).
        #expect(seen.value.first == "1,5")
        #expect(seen.value.allSatisfy { $0 == "1,5" })
        outer.cancel()
        held.value?.cancel()
    }

    @Test("two parts of one root beside another root, written on two threads: never a mix of one root's parts")
    func mixedRootsConcurrently() {
        struct Pair { var left = 0, right = 0 }
        let pair = MutableProperty(Pair())
        let other = MutableProperty(0)
        let line = Property.combine(pair.scope(\.left), pair.scope(\.right), other) { left, right, _ in left == right }
        let mixes = Shared(0)
        let subscription = line.observe { same in if !same { mixes.value += 1 } }
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for value in 1...3_000 {
                if index == 0 { pair.value = Pair(left: value, right: value) } else { other.value = value }
            }
        }
        #expect(mixes.value == 0)
        #expect(line.value)
        subscription.cancel()
    }
}

extension DerivedActivationTests {
    @Test("an observer of one part that writes another root mid-delivery never sees a mix of that part's root")
    func writeOtherRootMidDelivery() {
        struct Pair { var left = 0, right = 0 }
        let pair = MutableProperty(Pair())
        let other = MutableProperty(0)
        let line = Property.combine(pair.scope(\.left), pair.scope(\.right), other) { left, right, other in
            "\(left == right) \(other)"
        }
        let recorder = Recorder(line)
        let writer = pair.scope(\.left).observe { left in if left > 0 { other.value = left } }
        pair.value = Pair(left: 1, right: 1)
        pair.value = Pair(left: 2, right: 2)
        #expect(recorder.values.allSatisfy { $0.hasPrefix("true") })
        #expect(recorder.values.last == "true 2")
        writer.cancel()
    }

    @Test("a combination of several roots that feeds another: the outer one never pairs new with old")
    func nestedIndependentCombinations() {
        let a = MutableProperty(0)
        let b = MutableProperty(10)
        let sum = Property.combine(a, b) { $0 + $1 }
        let back = Property.combine(sum, a) { sum, a in sum - a }   // always b's value
        let recorder = Recorder(back)
        for value in 1...5 { a.value = value }
        b.value = 20
        #expect(recorder.values.allSatisfy { $0 == 10 || $0 == 20 })
        #expect(recorder.values.first == 10)
        #expect(back.value == 20)
    }

    @Test("observed, unobserved and observed again from two threads at once, it still follows its sources")
    func churnAcrossThreads() {
        let x = MutableProperty(0)
        let y = MutableProperty(0)
        let sum = Property.combine(x, y) { $0 + $1 }
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            for round in 0..<500 {
                let subscription = sum.observe { _ in }
                if index == 0 { x.value = round } else { y.value = round }
                subscription.cancel()
            }
        }
        let recorder = Recorder(sum)
        x.value = 1_000
        y.value = 2_000
        #expect(recorder.values.last == 3_000)
        #expect(sum.value == 3_000)
    }
}

extension DerivedActivationTests {
    @Test("a combination of two roots frees what its transform captured, and the roots, once it is gone")
    func independentRootsRelease() {
        weak var weakToken: Token?
        weak var weakRoot: MutableProperty<Int>?
        var recorder: Recorder<Int>?
        do {
            let token = Token(100)
            weakToken = token
            let x = MutableProperty(1)
            weakRoot = x
            let y = MutableProperty(2)
            let sum = Property.combine(x, y) { $0 + $1 + token.id }
            recorder = Recorder(sum)
            x.value = 3
        }
        #expect(recorder?.values == [103, 105])
        #expect(weakToken != nil)
        recorder?.cancel()
        recorder = nil
        #expect(weakToken == nil)
        #expect(weakRoot == nil)
    }

    @Test("the root and the graph of a chain of one root are freed once its properties and observers are gone")
    func oneRootRelease() {
        weak var weakRoot: MutableProperty<Int>?
        weak var weakToken: Token?
        var recorder: Recorder<String>?
        do {
            let token = Token(1)
            weakToken = token
            let root = MutableProperty(0)
            weakRoot = root
            let a = root.map { $0 + token.id }
            let b = root.select { $0 * 2 }
            recorder = Recorder(Property.combine(a, b) { "\($0)/\($1)" })
            root.value = 2
        }
        #expect(recorder?.values == ["1/0", "3/4"])
        recorder?.cancel()
        recorder = nil
        #expect(weakRoot == nil)
        #expect(weakToken == nil)
    }
}

/// Keeps a subscription made inside a delivery for `cancelWhileWaiting`.
private let keep = Shared<Subscription?>(nil)
