import Testing
@testable import Stillwater

@Suite("Event")
struct EventTests {
    @Test("value is the payload of next and nil for terminal events")
    func valueAccessor() {
        #expect(Event<Int>.next(3).value == 3)
        #expect(Event<Int>.completed.value == nil)
        #expect(Event<Int>.error(TestError()).value == nil)
    }

    @Test("error is set only for an error event")
    func errorAccessor() {
        #expect(Event<Int>.error(TestError(code: 4)).error as? TestError == TestError(code: 4))
        #expect(Event<Int>.next(1).error == nil)
        #expect(Event<Int>.completed.error == nil)
    }

    @Test("isTerminal is true for error and completed only",
          arguments: [(Event<Int>.next(1), false), (.completed, true), (.error(TestError()), true)])
    func terminal(event: Event<Int>, isTerminal: Bool) {
        #expect(event.isTerminal == isTerminal)
    }

    @Test("map transforms a value and passes terminal events unchanged")
    func mapEvent() {
        #expect(Event<Int>.next(2).map { "\($0 * 10)" } == .next("20"))
        #expect(Event<Int>.completed.map { "\($0)" } == .completed)
        #expect(Event<Int>.error(TestError(code: 2)).map { "\($0)" } == .error(TestError(code: 2)))
    }

    @Test("filter drops a rejected value and keeps terminal events")
    func filterEvent() {
        #expect(Event<Int>.next(2).filter { $0 > 1 } == .next(2))
        #expect(Event<Int>.next(0).filter { $0 > 1 } == nil)
        #expect(Event<Int>.completed.filter { _ in false } == .completed)
        #expect(Event<Int>.error(TestError()).filter { _ in false } == .error(TestError()))
    }

    @Test("compactMap drops nil results and keeps terminal events")
    func compactMapEvent() {
        #expect(Event<String>.next("5").compactMap { Int($0) } == .next(5))
        #expect(Event<String>.next("x").compactMap { Int($0) } == nil)
        #expect(Event<String>.completed.compactMap { Int($0) } == .completed)
    }

    @Test("equality compares errors by type and description")
    func equality() {
        struct Other: Error, CustomStringConvertible { var description: String { "TestError(1)" } }
        #expect(Event<Int>.error(TestError(code: 1)) == .error(TestError(code: 1)))
        #expect(Event<Int>.error(TestError(code: 1)) != .error(TestError(code: 2)))
        #expect(Event<Int>.error(TestError(code: 1)) != .error(Other()))
        #expect(Event<Int>.next(1) != .completed)
        #expect(Event<Int>.next(1) != .next(2))
    }

    @Test("description reads next(value), error(error) and completed")
    func descriptions() {
        #expect(Event<Int>.next(1).description == "next(1)")
        #expect(Event<Int>.completed.description == "completed")
        #expect(Event<Int>.error(TestError(code: 3)).description == "error(TestError(3))")
    }
}
