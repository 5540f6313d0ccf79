import Testing
@testable import Stillwater
import StillwaterTesting

@Suite("throttle")
struct ThrottleTests {
    @Test("throttle sends the first value at once and the newest at the end of the interval (documented)")
    func documentedLatest() {
        expectMarbles("-abc-------d-|", { $0.throttle(for: .milliseconds(3), scheduler: $1) }, "-a--c------d-|")
    }

    @Test("throttle with latest: false sends the first value held in the interval (documented)")
    func documentedFirst() {
        expectMarbles("-abc-------d-|", { $0.throttle(for: .milliseconds(3), scheduler: $1, latest: false) },
                      "-a--b------d-|")
    }

    @Test("throttle keeps sending one value per interval while values keep coming")
    func steadyStream() {
        expectMarbles("-abcdefg--", { $0.throttle(for: .milliseconds(2), scheduler: $1) }, "-a-c-e-g--")
    }

    @Test("throttle goes idle when an interval ends with nothing held, and sends the next value at once")
    func idleAgain() {
        expectMarbles("-a----b|", { $0.throttle(for: .milliseconds(2), scheduler: $1) }, "-a----b|")
    }

    @Test("throttle sends a held value at once on completion", arguments: [true, false])
    func flushesOnCompletion(latest: Bool) {
        expectMarbles("-abc|", { $0.throttle(for: .milliseconds(5), scheduler: $1, latest: latest) },
                      latest ? "-a--(c|)" : "-a--(b|)")
    }

    @Test("throttle drops a held value and sends an error at once")
    func errorDropsHeld() {
        expectMarbles("-ab#", { $0.throttle(for: .milliseconds(5), scheduler: $1) }, "-a-#")
    }

    @Test("throttle with an interval of zero passes values at distinct times")
    func zeroInterval() {
        expectMarbles("-a-b|", { $0.throttle(for: .zero, scheduler: $1) }, "-a-b|")
    }

    @Test("throttle completes without values when the source is empty")
    func empty() {
        expectMarbles("-|", { $0.throttle(for: .milliseconds(3), scheduler: $1) }, "-|")
    }

    @Test("the throttle state machine holds the newest or the first value, and goes idle when empty")
    func stateMachine() {
        var latest = ThrottleState<Int>(latest: true)
        #expect(latest.receive(1) == 1)
        #expect(latest.receive(2) == nil)
        #expect(latest.receive(3) == nil)
        #expect(latest.intervalEnded() == 3)
        #expect(latest.intervalEnded() == nil)
        #expect(latest.receive(4) == 4)
        var first = ThrottleState<Int>(latest: false)
        _ = first.receive(1)
        _ = first.receive(2)
        _ = first.receive(3)
        #expect(first.intervalEnded() == 2)
    }
}
