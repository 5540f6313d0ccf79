import Testing
@testable import Stillwater

@Suite("ReplayBuffer")
struct ReplayBufferTests {
    @Test("keeps the last n values, oldest first, across many wrap-arounds", arguments: [1, 2, 3, 7])
    func keepsLastValues(capacity: Int) {
        var buffer = ReplayBuffer<Int>(capacity: capacity)
        #expect(buffer.isEmpty)
        for value in 1...50 {
            buffer.append(value)
            let expected = Array(Swift.max(1, value - capacity + 1)...value)
            #expect(Array(buffer.elements) == expected, "after \(value)")
            #expect(buffer.latest == value)
            #expect(buffer.count == expected.count)
        }
    }

    @Test("once full, appending overwrites in place: the storage never grows past the capacity")
    func storageStaysBounded() {
        var buffer = ReplayBuffer<Int>(capacity: 4)
        for value in 1...1_000 { buffer.append(value) }
        #expect(buffer.storage.count == 4)
        #expect(Array(buffer.elements) == [997, 998, 999, 1000])
    }

    @Test("the latest value is changed in place, wherever the ring starts")
    func latestModify() {
        var buffer = ReplayBuffer<[Int]>(capacity: 3)
        for value in 1...5 { buffer.append([value]) }
        buffer.latest.append(50)
        #expect(Array(buffer.elements) == [[3], [4], [5, 50]])
        var current = ReplayBuffer(capacity: 1, initial: "a")
        current.latest += "b"
        current.append("c")
        #expect(Array(current.elements) == ["c"])
    }

    @Test("a replay subject replays its last values in order after wrapping, before and after its end")
    func replaySubjectOrder() {
        let subject = ReplaySubject<Int>(bufferSize: 3)
        for value in 1...10 { subject.send(value) }
        var seen: [Int] = []
        let first = subject.observe { seen.append($0) }
        #expect(seen == [8, 9, 10])
        subject.complete()
        var late: [Event<Int>] = []
        let second = subject.subscribe { late.append($0) }
        #expect(late == [.next(8), .next(9), .next(10), .completed])
        withExtendedLifetime((first, second)) {}
    }
}
