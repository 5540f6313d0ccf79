import Stillwater
import Testing
@testable import TodoCore

/// A clock that moves only when the test sets it.
final class ManualClock: @unchecked Sendable {
    var now: Duration = .zero
}

@Suite("PollingScheduler")
struct PollingSchedulerTests {
    let clock = ManualClock()
    var scheduler: PollingScheduler { PollingScheduler(now: { [clock] in clock.now }) }

    @Test("runDue runs only the work that is due, in due order, and work due together in scheduling order")
    func dueOrder() {
        let scheduler = self.scheduler
        var ran: [String] = []
        scheduler.schedule(after: .milliseconds(300)) { ran.append("300") }
        scheduler.schedule(after: .milliseconds(100)) { ran.append("100 a") }
        scheduler.schedule(after: .milliseconds(500)) { ran.append("500") }
        scheduler.schedule(after: .milliseconds(100)) { ran.append("100 b") }
        scheduler.schedule { ran.append("now") }
        #expect(scheduler.timeUntilNextDue == .zero)

        #expect(scheduler.runDue() == 1)
        #expect(ran == ["now"])
        #expect(scheduler.timeUntilNextDue == .milliseconds(100))

        clock.now = .milliseconds(99)
        #expect(scheduler.runDue() == 0, "nothing is due before its time")
        clock.now = .milliseconds(350)
        #expect(scheduler.runDue() == 3)
        #expect(ran == ["now", "100 a", "100 b", "300"])
        #expect(scheduler.pendingWorkCount == 1)
        #expect(scheduler.timeUntilNextDue == .milliseconds(150))

        clock.now = .seconds(1)
        scheduler.runDue()
        #expect(ran == ["now", "100 a", "100 b", "300", "500"])
        #expect(scheduler.pendingWorkCount == 0)
        #expect(scheduler.timeUntilNextDue == nil)
    }

    @Test("nothing runs outside runDue, however late it is")
    func onlyInRunDue() {
        let scheduler = self.scheduler
        var ran = false
        scheduler.schedule { ran = true }
        clock.now = .seconds(60)
        #expect(!ran)
        scheduler.runDue()
        #expect(ran)
    }

    @Test("cancelled work never runs and is released at once")
    func cancel() {
        let scheduler = self.scheduler
        var ran: [Int] = []
        final class Token {}
        weak var captured: Token?
        let first: any Cancellable
        do {
            let token = Token()
            captured = token
            first = scheduler.schedule(after: .milliseconds(10)) { _ = token; ran.append(1) }
        }
        scheduler.schedule(after: .milliseconds(10)) { ran.append(2) }
        first.cancel()
        #expect(captured == nil, "the cancelled closure was released")
        #expect(scheduler.pendingWorkCount == 1)
        clock.now = .milliseconds(10)
        #expect(scheduler.runDue() == 1)
        #expect(ran == [2])
    }

    @Test("work scheduled by running work runs in the same runDue when it is due by then")
    func scheduledWhileRunning() {
        let scheduler = self.scheduler
        var ran: [String] = []
        scheduler.schedule {
            ran.append("first")
            scheduler.schedule { ran.append("second") }
            scheduler.schedule(after: .milliseconds(5)) { ran.append("later") }
        }
        scheduler.runDue()
        #expect(ran == ["first", "second"])
        clock.now = .milliseconds(5)
        scheduler.runDue()
        #expect(ran == ["first", "second", "later"])
    }

    @Test("repeating work runs once for each time it was due, until cancelled")
    func repeating() {
        let scheduler = self.scheduler
        var count = 0
        let work = scheduler.schedule(after: .milliseconds(10), interval: .milliseconds(10)) { count += 1 }
        clock.now = .milliseconds(35)
        scheduler.runDue()
        #expect(count == 3)
        work.cancel()
        clock.now = .seconds(1)
        scheduler.runDue()
        #expect(count == 3)
        #expect(scheduler.pendingWorkCount == 0)
    }

    @Test("a debounced save waits on it: the write happens in the runDue after the delay")
    func sessionSave() throws {
        let folder = TemporaryFolder()
        let scheduler = self.scheduler
        let file = TodoFile(path: folder.file("list.json"))
        let session = TodoSession(TodoList(), file: file, saveDelay: .milliseconds(400), scheduler: scheduler)
        _ = try session.perform(.add("milk"))
        clock.now = .milliseconds(399)
        scheduler.runDue()
        #expect(try file.load() == .missing)
        clock.now = .milliseconds(400)
        scheduler.runDue()
        #expect(try file.load().list.items.map(\.title) == ["milk"])
    }
}
