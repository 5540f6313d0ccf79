#if canImport(Testing)
import Testing
#endif
import Stillwater

/// The result of comparing a ``Recorder``'s timeline with a marble diagram: whether they match, and a
/// description that shows expected and actual side by side.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let source = scheduler.cold("-a|", values: ["a": 1])
/// let recorder = Recorder(source.delay(for: .milliseconds(1), scheduler: scheduler), scheduler: scheduler)
/// scheduler.run()
/// let comparison = recorder.compare("--a|", values: ["a": 1])
/// #expect(comparison.isMatch, "\(comparison)")
/// ```
///
/// ``Recorder/expect(_:values:error:sourceLocation:)`` does this in one call under Swift Testing.
public struct MarbleComparison<Value: Equatable>: CustomStringConvertible {
    /// The events the diagram stands for, with their times.
    public let expected: [Recorded<Value>]
    /// The events the recorder saw, with their times.
    public let actual: [Recorded<Value>]
    /// The value table used to draw the events.
    public let values: [Character: Value]
    /// The time of one frame.
    public let frame: Duration

    /// Whether the recorder saw exactly the expected events at exactly the expected times.
    public var isMatch: Bool {
        expected == actual
    }

    /// The two diagrams one above the other, then each event side by side, rows that differ marked `✗`.
    ///
    /// ```
    /// marbles differ (one frame = 100 ms)
    ///   expected: ---a-b|
    ///   actual:   ---a--b|
    ///       expected            actual
    ///     1 300 ms   next(1)    300 ms   next(1)
    ///   ✗ 2 500 ms   next(2)    600 ms   next(2)
    ///   ✗ 3 600 ms   completed  700 ms   completed
    /// ```
    public var description: String {
        let header = isMatch ? "marbles match" : "marbles differ"
        var lines = [
            "\(header) (one frame = \(Marbles.describe(frame)))",
            "  expected: \(Marbles.draw(expected, values: values, frame: frame))",
            "  actual:   \(Marbles.draw(actual, values: values, frame: frame))",
        ]
        let onFrames = (expected + actual).allSatisfy { ($0.time / frame).rounded(.down) == $0.time / frame }
        if !onFrames { lines.append("  (times between frames are drawn in the frame they fall in)") }
        let left = expected.map(describeRow)
        let right = actual.map(describeRow)
        let width = max("expected".count, left.map(\.count).max() ?? 0)
        let number = String(max(left.count, right.count)).count
        lines.append("  " + String(repeating: " ", count: number + 3) + pad("expected", width) + "  actual")
        for row in 0..<max(left.count, right.count) {
            let same = row < expected.count && row < actual.count && expected[row] == actual[row]
            let mark = same ? "  " : "✗ "
            let leftCell = row < left.count ? left[row] : "—"
            let rightCell = row < right.count ? right[row] : "—"
            let index = String(row + 1)
            lines.append("  " + mark + String(repeating: " ", count: number - index.count) + index + " "
                         + pad(leftCell, width) + "  " + rightCell)
        }
        return lines.joined(separator: "\n")
    }
}

/// One side of a row of ``MarbleComparison/description``: `300 ms  next(1)`.
private func describeRow<Value>(_ entry: Recorded<Value>) -> String {
    let event: String
    switch entry.event {
    case .next(let value): event = "next(\(String(reflecting: value)))"
    case .completed: event = "completed"
    case .error(let error): event = "error(\(error))"
    }
    return pad(Marbles.describe(entry.time), 7) + "  " + event
}

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

extension Recorder where Value: Equatable {
    /// Compares what was recorded with `marbles` (frame 0 at `.zero` on the scheduler's clock).
    ///
    /// - Parameters:
    ///   - marbles: The expected diagram: `-` a frame, a character from `values` a value, `|` completion,
    ///     `#` failure, `(ab)` events in one frame; spaces are ignored.
    ///   - values: The value of each value character.
    ///   - error: The error `#` stands for; errors match when their type and description match.
    public func compare(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError()
    ) -> MarbleComparison<Value> {
        let frame = frame(for: "compare(_:values:error:)")
        return MarbleComparison(
            expected: Marbles.timeline(marbles, values: values, error: error, frame: frame),
            actual: timeline, values: values, frame: frame)
    }

    /// What was recorded, drawn as a marble diagram with the characters of `values`; a value missing from
    /// the table is drawn `?`.
    ///
    /// ```swift
    /// let scheduler = TestScheduler()
    /// let source = scheduler.cold("-a-b|", values: ["a": 1, "b": 2])
    /// let recorder = Recorder(source.delay(for: .milliseconds(2), scheduler: scheduler), scheduler: scheduler)
    /// scheduler.run()
    /// print(recorder.marbles(values: ["a": 1, "b": 2]))
    /// // Prints "---a-b|"
    /// ```
    public func marbles(values: [Character: Value]) -> String {
        Marbles.draw(timeline, values: values, frame: frame(for: "marbles(values:)"))
    }
}

extension Recorder where Value == String {
    /// Compares what was recorded with `marbles`, whose value characters stand for themselves.
    public func compare(_ marbles: String, error: any Error = MarbleError()) -> MarbleComparison<String> {
        compare(marbles, values: Marbles.selfNamed(marbles), error: error)
    }
}

#if canImport(Testing)
extension Recorder where Value: Equatable {
    /// Records a test issue unless the recorder saw exactly the events of `marbles` at their times; the
    /// issue shows the expected and the actual diagram and events side by side.
    ///
    /// ```swift
    /// let scheduler = TestScheduler(frame: .milliseconds(100))
    /// let typed = scheduler.hot("-a-b----c---|", values: ["a": "s", "b": "sw", "c": "swift"])
    /// let recorder = Recorder(typed.debounce(for: .milliseconds(300), scheduler: scheduler), scheduler: scheduler)
    /// scheduler.run()
    /// recorder.expect("------b----c|", values: ["b": "sw", "c": "swift"])
    /// ```
    ///
    /// The notation, one character per ``TestScheduler/frame`` from `.zero`:
    /// - `-` a frame in which nothing happens; a value character from `values` a value;
    /// - `|` completion, `#` failure with `error`;
    /// - `(ab)` events in the same frame (the frame of the `(`); every character of a group still counts
    ///   as a frame, so diagrams stay aligned: in `(ab)-c`, `c` is at frame 5;
    /// - spaces are ignored.
    ///
    /// - Parameters:
    ///   - marbles: The expected diagram.
    ///   - values: The value of each value character.
    ///   - error: The error `#` stands for; errors match when their type and description match.
    ///   - sourceLocation: Where a mismatch is reported; the caller's line unless given.
    public func expect(
        _ marbles: String, values: [Character: Value], error: any Error = MarbleError(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let comparison = compare(marbles, values: values, error: error)
        guard !comparison.isMatch else { return }
        Issue.record(Comment(rawValue: comparison.description), sourceLocation: sourceLocation)
    }
}

extension Recorder where Value == String {
    /// Records a test issue unless the recorder saw exactly the events of `marbles`, whose value
    /// characters stand for themselves: `recorder.expect("--a-b|")`.
    public func expect(
        _ marbles: String, error: any Error = MarbleError(), sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expect(marbles, values: Marbles.selfNamed(marbles), error: error, sourceLocation: sourceLocation)
    }
}
#endif
