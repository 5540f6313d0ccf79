import Dispatch
import Testing
@testable import Stillwater

/// A child component's inputs, holding its callback as a handle.
private struct RowProps: Equatable {
    var title: String
    var isDone: Bool
    var onToggle: ActionHandle<Void>
}

@Suite("RenderGate")
struct RenderGateTests {
    @Test("renders the first input, skips equal ones, and renders each change")
    func rendersOnlyChanges() {
        let drawn = Shared<[String]>([])
        let gate = RenderGate<String> { drawn.value.append($0) }
        #expect(gate.renderCount == 0)
        #expect(gate.lastRendered == nil)
        for title in ["a", "a", "b", "b", "b", "a"] { gate.update(title) }
        #expect(drawn.value == ["a", "b", "a"])
        #expect(gate.renderCount == 3)
        #expect(gate.lastRendered == "a")
    }

    @Test("props that hold the same handle do not re-render; the same props rebuilt with a new handle do")
    func handleKeepsPropsEqual() {
        let gate = RenderGate<RowProps> { _ in }
        let onToggle = ActionHandle<Void>()
        // The parent rebuilds the child's props ten times, passing the same handle each time.
        for _ in 0..<10 { gate.update(RowProps(title: "Milk", isDone: false, onToggle: onToggle)) }
        #expect(gate.renderCount == 1)
        // A parent that makes a new callback on each rebuild (what a closure does) re-renders every time.
        for _ in 0..<10 { gate.update(RowProps(title: "Milk", isDone: false, onToggle: ActionHandle())) }
        #expect(gate.renderCount == 11)
    }

    @Test("a real change renders even when the handle stays the same")
    func changeWithSameHandle() {
        let gate = RenderGate<RowProps> { _ in }
        let onToggle = ActionHandle<Void>()
        gate.update(RowProps(title: "Milk", isDone: false, onToggle: onToggle))
        gate.update(RowProps(title: "Milk", isDone: true, onToggle: onToggle))
        gate.update(RowProps(title: "Milk", isDone: true, onToggle: onToggle))
        #expect(gate.renderCount == 2)
        #expect(gate.lastRendered?.isDone == true)
    }

    @Test("an update made from inside render is handled after it returns, never nested")
    func reentrantUpdate() {
        let log = Shared<[String]>([])
        let gate = Shared<RenderGate<Int>?>(nil)
        gate.value = RenderGate { value in
            log.value.append("begin \(value)")
            if value == 1 {
                gate.value?.update(2)
                gate.value?.update(2)   // equal to the queued update: skipped
                gate.value?.update(3)
            }
            log.value.append("end \(value)")
        }
        gate.value?.update(1)
        #expect(log.value == ["begin 1", "end 1", "begin 2", "end 2", "begin 3", "end 3"])
        #expect(gate.value?.renderCount == 3)
        gate.value?.update(3)
        #expect(gate.value?.renderCount == 3, "the queue must be empty and the last input remembered")
    }

    @Test("invalidate makes the next update render an equal input, once")
    func invalidate() {
        let gate = RenderGate<Int> { _ in }
        gate.update(7)
        gate.invalidate()
        gate.update(7)
        gate.update(7)
        #expect(gate.renderCount == 2)
    }

    @Test("invalidate before the first update changes nothing")
    func invalidateFirst() {
        let gate = RenderGate<Int> { _ in }
        gate.invalidate()
        gate.update(1)
        gate.update(1)
        #expect(gate.renderCount == 1)
    }

    @Test("fed by one stream's observer, a gate renders each run of equal values once, from any thread")
    func fedByStream() {
        let values = MutableProperty(0)
        let delivered = Shared<[Int]>([])
        let gate = RenderGate<Int> { _ in }
        let subscription = values.observe { value in
            delivered.value.append(value)
            gate.update(value)
        }
        DispatchQueue.concurrentPerform(iterations: 4) { lane in
            for step in 0..<2_000 { values.value = (step / 10 + lane) % 3 }
        }
        let runs = zip(delivered.value, delivered.value.dropFirst()).filter { $0 != $1 }.count + 1
        #expect(delivered.value.count == 8_001)
        #expect(gate.renderCount == runs)
        #expect(gate.lastRendered == delivered.value.last)
        withExtendedLifetime(subscription) {}
    }

    @Test("the gate releases its render closure's captures when freed")
    func releasesRender() {
        var token: Token? = Token()
        weak let weakToken = token
        var gate: RenderGate<Int>? = RenderGate { [token] _ in _ = token }
        token = nil
        gate?.update(1)
        #expect(weakToken != nil)
        gate = nil
        #expect(weakToken == nil)
    }
}
