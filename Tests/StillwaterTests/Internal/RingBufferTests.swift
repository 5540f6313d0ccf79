import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("RingBuffer")
struct RingBufferTests {
    @Test("below capacity it keeps every element, oldest first")
    func order() {
        var ring = RingBuffer<Int>(capacity: 5)
        for value in 1...3 { #expect(ring.append(value) == nil) }
        #expect(Array(ring) == [1, 2, 3])
        #expect(ring.count == 3 && ring.first == 1 && ring.last == 3)
    }

    @Test("when full, appending drops the oldest element and returns it, wrapping around the slots")
    func wrapAround() {
        var ring = RingBuffer<Int>(capacity: 3)
        var dropped: [Int] = []
        for value in 1...8 {
            if let oldest = ring.append(value) { dropped.append(oldest) }
            #expect(Array(ring) == Array(max(1, value - 2)...value))
        }
        #expect(dropped == [1, 2, 3, 4, 5])
        #expect(ring.count == 3)
    }

    @Test("popLast takes back the newest element, also after the slots wrapped")
    func popLastAfterWrap() {
        var ring = RingBuffer<Int>(capacity: 3)
        for value in 1...5 { ring.append(value) }      // [3, 4, 5], the oldest in the last slot
        #expect(ring.popLast() == 5)
        #expect(Array(ring) == [3, 4])
        ring.append(6)
        #expect(Array(ring) == [3, 4, 6])
        #expect(ring.append(7) == 3)
        #expect(Array(ring) == [4, 6, 7])
        #expect(ring.popLast() == 7)
        #expect(ring.popLast() == 6)
        #expect(ring.popLast() == 4)
        #expect(ring.popLast() == nil)
        #expect(ring.isEmpty)
        ring.append(8)
        #expect(Array(ring) == [8])
    }

    @Test("a capacity of 0 keeps nothing: appending hands the element straight back")
    func capacityZero() {
        var ring = RingBuffer<Int>(capacity: 0)
        #expect(ring.append(1) == 1)
        #expect(ring.isEmpty)
        #expect(ring.popLast() == nil)
        #expect(Array(ring) == [])
    }

    @Test("a capacity of 1 keeps the newest element only")
    func capacityOne() {
        var ring = RingBuffer<Int>(capacity: 1)
        #expect(ring.append(1) == nil)
        #expect(ring.append(2) == 1)
        #expect(ring.append(3) == 2)
        #expect(Array(ring) == [3])
        #expect(ring.popLast() == 3)
        #expect(ring.isEmpty)
        #expect(ring.append(4) == nil)
        #expect(Array(ring) == [4])
    }

    @Test("removeAll empties the buffer, which then fills again from its first slot")
    func removeAll() {
        var ring = RingBuffer<Int>(capacity: 3)
        for value in 1...4 { ring.append(value) }
        ring.removeAll()
        #expect(ring.isEmpty && ring.count == 0)
        for value in 5...8 { ring.append(value) }
        #expect(Array(ring) == [6, 7, 8])
    }

    @Test("elements dropped, popped or removed are released at once")
    func releases() {
        var ring = RingBuffer<Token>(capacity: 2)
        var tokens: [Token]? = (0..<4).map { Token($0) }
        let watched = tokens!.map { WeakToken($0) }
        for token in tokens! { ring.append(token) }    // 0 and 1 dropped
        tokens = nil
        #expect(watched.map { $0.token != nil } == [false, false, true, true])
        _ = ring.popLast()
        #expect(watched[3].token == nil)
        ring.removeAll()
        #expect(watched[2].token == nil)
    }

    @Test("behaves like an array that drops its first element beyond the capacity", arguments: 0..<40)
    func matchesArray(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        let capacity = seed % 5
        var ring = RingBuffer<Int>(capacity: capacity)
        var model: [Int] = []
        for step in 0..<300 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let dropped = ring.append(step)
                model.append(step)
                let expected = model.count > capacity ? model.removeFirst() : nil
                #expect(dropped == expected)
            case 6..<9:
                #expect(ring.popLast() == model.popLast())
            default:
                ring.removeAll()
                model.removeAll()
            }
            #expect(Array(ring) == model, "seed \(seed), step \(step)")
        }
    }
}

/// Holds a token weakly, so a test can see when everything else let go of it.
private struct WeakToken {
    weak var token: Token?
    init(_ token: Token) { self.token = token }
}
