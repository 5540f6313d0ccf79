@testable import ConformanceKit
import OpenCombine
import Stillwater
import StillwaterTesting
import Testing

@Suite("conformance")
struct ConformanceTests {
    @Test("every pair agrees with OpenCombine, or differs only as classified", arguments: pairs.map(\.name))
    func pairAgrees(name: String) {
        let outcome = check(pairs.first { $0.name == name }!, scripts: 400, seed: 42)
        #expect(outcome.unclassified == 0, "\(outcome.examples[.unclassified]?.description ?? "")")
        #expect(outcome.counts[.same, default: 0] > 0)
    }

    @Test("a chain that really differs is unclassified")
    func catchesADifference() {
        let wrong = Pair("map / a different map",
                         stillwater: { a, _ in a.map { $0 * 2 } },
                         openCombine: { a, _ in a.map { $0 * 2 + ($0 == 7 ? 1 : 0) }.eraseToAnyPublisher() })
        #expect(check(wrong, scripts: 400, seed: 42).unclassified > 0)
        let early = Pair("take(3) / prefix(2)", known: .finishesAfter(3),
                         stillwater: { a, _ in a.take(3) },
                         openCombine: { a, _ in a.prefix(2).eraseToAnyPublisher() })
        #expect(check(early, scripts: 400, seed: 42).unclassified > 0)
    }

    @Test("a reentrant send that OpenCombine nests and Stillwater queues is classified as such")
    func reentrancyClassified() {
        let outcome = check(pairs.first { $0.name == "map / map" }!, scripts: 400, seed: 42)
        #expect(outcome.counts[.reentrancyQueued, default: 0] > 0)
        let example = outcome.examples[.reentrancyQueued]!
        #expect(example.stillwater != example.openCombine)
    }

    @Test("OpenCombine's prefix(n), which finishes only at the event after the n-th value, is a known difference")
    func knownDifference() {
        let outcome = check(pairs.first { $0.name == "take(3) / prefix(3)" }!, scripts: 400, seed: 42)
        #expect(outcome.counts[.knownDifference, default: 0] > 0)
        #expect(outcome.unclassified == 0)
    }

    @Test("the differences explained by a peer chain or a rewrite are found, and only there", arguments: [
        "take(until:) / prefix(untilOutputFrom:)", "element(at: 2) / output(at: 2)",
        "flatMap(maxConcurrent: 2) / flatMap(maxPublishers: .max(2))", "concatMap / flatMap(maxPublishers: .max(1))",
    ])
    func peerDifferences(name: String) {
        let outcome = check(pairs.first { $0.name == name }!, scripts: 400, seed: 42)
        #expect(outcome.counts[.knownDifference, default: 0] > 0)
        #expect(outcome.unclassified == 0)
    }

    @Test("a peer chain explains only what it composes")
    func wrongPeer() {
        // flatMap(maxPublishers: .max(1)) checked against a peer of .max(2): the queued outer values come
        // in another order, which nothing explains.
        let inner: @Sendable (Int, Input) -> Input = { value, other in
            value % 3 == 0 ? Publishers.Sequence(sequence: [value * 10, value * 10 + 1]).eraseToAnyPublisher()
                : other.map { value * 100 + $0 }.eraseToAnyPublisher()
        }
        let wrong = Pair("concatMap / flatMap(maxPublishers: .max(1)), peer of .max(2)", inputs: 2,
                         known: .queuesOuterValues(2, inner),
                         stillwater: { a, b in
                             a.concatMap { value in
                                 value % 3 == 0 ? Observable.of(value * 10, value * 10 + 1) : b.map { value * 100 + $0 } } },
                         openCombine: { a, b in a.flatMap(maxPublishers: .max(1)) { inner($0, b) }.eraseToAnyPublisher() })
        #expect(check(wrong, scripts: 400, seed: 42).unclassified > 0)
    }

    @Test("the OpenCombine runner's inputs send to their subscribers in subscription order")
    func orderedInputs() {
        // Three inner streams on input 1 (OpenCombine 0.14's PassthroughSubject would order them by hash).
        let script = Script(steps: [.send(input: 0, value: 1), .send(input: 0, value: 2), .send(input: 0, value: 4),
                                    .send(input: 1, value: 5)], reentry: nil)
        let expected = ["105", "/105", "205", "/205", "405", "/405"]
        for _ in 0..<20 {
            #expect(runOpenCombine(script, { a, b in
                a.flatMap { value in b.map { value * 100 + $0 } }.eraseToAnyPublisher() }) == expected)
        }
        #expect(runStillwater(script, { a, b in a.flatMap { value in b.map { value * 100 + $0 } } }) == expected)
    }

    @Test("a nested delivery in the Stillwater log is never explained")
    func nestingUnclassified() {
        var random = SeededRandom(seed: 1)
        let script = Script.random(inputs: 1, reentrant: false, using: &random)
        let nested = ["1", "2", "/2", "/1"]
        #expect(classify(stillwater: nested, openCombine: nested, queued: nested, script: script) == .unclassified)
        let flat = ["1", "/1", "done"]
        #expect(classify(stillwater: flat, openCombine: flat, queued: flat, script: script) == .same)
    }

    @Test("the same seed gives the same scripts")
    func seeded() {
        var first = SeededRandom(seed: 9)
        var second = SeededRandom(seed: 9)
        for _ in 0..<50 {
            #expect(Script.random(inputs: 2, reentrant: true, using: &first).description
                == Script.random(inputs: 2, reentrant: true, using: &second).description)
        }
    }
}
