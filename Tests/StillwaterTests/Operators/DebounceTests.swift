import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("debounce")
struct DebounceTests {
    @Test("debounce sends a value once it stayed the newest for the due time (the documented diagram)")
    func documentedDiagram() {
        expectMarbles("-a-bc----d-|", { $0.debounce(for: .milliseconds(3), scheduler: $1) }, "-------c---(d|)")
    }

    @Test("debounce passes values that are further apart than the due time, each one due time later")
    func spacedValues() {
        expectMarbles("-a----b----|", { $0.debounce(for: .milliseconds(2), scheduler: $1) }, "---a----b--|")
    }

    @Test("debounce sends nothing while values keep coming faster than the due time")
    func burst() {
        expectMarbles("-abcdefg-----", { $0.debounce(for: .milliseconds(2), scheduler: $1) }, "---------g")
    }

    @Test("debounce with a due time of zero sends each value on the scheduler, at the same virtual time")
    func zeroDueTime() {
        expectMarbles("-ab-c|", { $0.debounce(for: .zero, scheduler: $1) }, "-ab-c|")
    }

    @Test("debounce sends a waiting value at once on completion, then completes")
    func flushesOnCompletion() {
        expectMarbles("-a|", { $0.debounce(for: .milliseconds(5), scheduler: $1) }, "--(a|)")
    }

    @Test("debounce drops a waiting value and sends an error at once")
    func errorDropsWaiting() {
        expectMarbles("-a-b#", { $0.debounce(for: .milliseconds(3), scheduler: $1) }, "----#")
    }

    @Test("debounce completes without values when the source is empty")
    func empty() {
        expectMarbles("--|", { $0.debounce(for: .milliseconds(3), scheduler: $1) }, "--|")
    }

    @Test("debounce on the immediate scheduler passes every value through at once")
    func immediate() {
        #expect(values(of: { $0.debounce(for: .seconds(5), scheduler: .immediate) }, sending: [1, 2, 3]) == [1, 2, 3])
    }

    @Test("debounce sends the value a stale timer was for only if no newer value replaced it")
    func stateMachine() {
        var machine = DebounceState<String>()
        let first = machine.hold("a")
        let second = machine.hold("b")
        #expect(machine.fire(first) == nil)
        #expect(machine.fire(second) == "b")
        #expect(machine.fire(second) == nil)
        #expect(machine.flush() == nil)
    }
}
