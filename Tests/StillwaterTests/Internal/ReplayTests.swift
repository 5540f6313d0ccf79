import Testing
@testable import Stillwater

/// A source's replay buffer is a ``RingBuffer``: what it keeps, and how its current value changes in place.
@Suite("Replay buffer")
struct ReplayTests {
    @Test("the newest value is changed in place, wherever the ring starts")
    func newestModify() {
        var buffer = RingBuffer<[Int]>(capacity: 3)
        for value in 1...5 { buffer.append([value]) }
        buffer.newest.append(50)
        #expect(Array(buffer) == [[3], [4], [5, 50]])
        var current = RingBuffer(capacity: 1, initial: "a")
        current.newest += "b"
        #expect(Array(current) == ["ab"])
        current.append("c")
        #expect(Array(current) == ["c"])
    }

    @Test("a replay copy shares the storage: the buffer's later writes do not change it")
    func replayCopyIsAValue() {
        var buffer = RingBuffer<Int>(capacity: 2)
        buffer.append(1)
        buffer.append(2)
        let replay = buffer
        buffer.append(3)
        buffer.newest = 30
        #expect(Array(replay) == [1, 2])
        #expect(Array(buffer) == [2, 30])
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

    @Test("a behaviour subject and a property replay their current value, and only the end once ended")
    func currentValueReplay() {
        let subject = BehaviorSubject(1)
        subject.send(2)
        var seen: [Event<Int>] = []
        let first = subject.subscribe { seen.append($0) }
        #expect(seen == [.next(2)])
        subject.complete()
        var late: [Event<Int>] = []
        let second = subject.subscribe { late.append($0) }
        #expect(late == [.completed])
        let property = MutableProperty([1])
        property.modify { $0.append(2) }
        var values: [[Int]] = []
        let third = property.observe { values.append($0) }
        #expect(values == [[1, 2]])
        withExtendedLifetime((first, second, third)) {}
    }
}
