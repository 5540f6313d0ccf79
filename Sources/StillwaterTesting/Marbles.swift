import Stillwater

/// Reads and writes marble diagrams: one character per frame of virtual time.
///
/// The notation (the RxJS one, without time expressions):
/// - `-` a frame in which nothing happens;
/// - any other character a value, looked up in the diagram's value table;
/// - `|` completion, `#` failure (with the diagram's error);
/// - `(ab)` several events in the same frame (the frame of the `(`); every character of the group,
///   parentheses included, still counts as a frame, so diagrams stay aligned;
/// - `^` (hot sources only) the moment the test starts: frames before it are in the past;
/// - spaces are ignored, for alignment.
enum Marbles {
    /// One event of a parsed diagram, at a frame counted from the diagram's start (or from its `^`).
    struct Entry<Value> {
        var frame: Int
        var event: Event<Value>
    }

    /// Parses `diagram`. Stops the program, naming the diagram and the fix, when it is malformed.
    static func parse<Value>(
        _ diagram: String, values: [Character: Value], error: any Error, allowsStartMarker: Bool
    ) -> [Entry<Value>] {
        var entries: [Entry<Value>] = []
        var index = 0
        var start: Int?
        var group: Int?
        var isEnded = false
        for character in diagram where !character.isWhitespace {
            let frame = group ?? index
            switch character {
            case "-":
                break
            case "^":
                precondition(allowsStartMarker,
                             "marbles \"\(diagram)\": '^' marks the start of a hot source only; remove it.")
                precondition(start == nil, "marbles \"\(diagram)\": '^' appears twice; keep one.")
                precondition(group == nil, "marbles \"\(diagram)\": '^' cannot be inside a group; move it out.")
                start = index
            case "(":
                precondition(group == nil, "marbles \"\(diagram)\": groups cannot nest; close the first with ')'.")
                group = index
            case ")":
                precondition(group != nil, "marbles \"\(diagram)\": ')' without '('; add the '(' or remove it.")
                group = nil
            default:
                precondition(!isEnded,
                             "marbles \"\(diagram)\": '\(character)' comes after the end ('|' or '#'); nothing follows the end.")
                let event: Event<Value>
                switch character {
                case "|":
                    event = .completed
                    isEnded = true
                case "#":
                    event = .error(error)
                    isEnded = true
                default:
                    guard let value = values[character] else {
                        preconditionFailure(
                            "marbles \"\(diagram)\": '\(character)' has no value; add \"\(character)\": … to values.")
                    }
                    event = .next(value)
                }
                entries.append(Entry(frame: frame, event: event))
            }
            index += 1
        }
        precondition(group == nil, "marbles \"\(diagram)\": a group is not closed; add ')'.")
        let offset = start ?? 0
        return entries.map { Entry(frame: $0.frame - offset, event: $0.event) }
    }

    /// The events of `diagram` at their times, for a diagram that starts at `.zero`.
    static func timeline<Value>(
        _ diagram: String, values: [Character: Value], error: any Error, frame: Duration
    ) -> [Recorded<Value>] {
        parse(diagram, values: values, error: error, allowsStartMarker: false).map {
            Recorded(time: frame * $0.frame, event: $0.event)
        }
    }

    /// Draws `events` as a diagram: values as their key in `values` (`?` when none matches), a group for
    /// events in the same frame. Times between frames are drawn in the frame they fall in.
    static func draw<Value: Equatable>(
        _ events: [Recorded<Value>], values: [Character: Value], frame: Duration
    ) -> String {
        let keys = values.keys.sorted()
        func symbol(_ event: Event<Value>) -> Character {
            switch event {
            case .next(let value): return keys.first { values[$0] == value } ?? "?"
            case .completed: return "|"
            case .error: return "#"
            }
        }
        var drawing = ""
        var position = 0
        var index = 0
        while index < events.count {
            let frameIndex = frameOf(events[index].time, frame: frame)
            var symbols: [Character] = []
            while index < events.count, frameOf(events[index].time, frame: frame) == frameIndex {
                symbols.append(symbol(events[index].event))
                index += 1
            }
            if frameIndex > position {
                drawing += String(repeating: "-", count: frameIndex - position)
                position = frameIndex
            }
            if symbols.count == 1 {
                drawing.append(symbols[0])
                position += 1
            } else {
                drawing += "(" + String(symbols) + ")"
                position += symbols.count + 2
            }
        }
        return drawing
    }

    /// The frame `time` falls in.
    static func frameOf(_ time: Duration, frame: Duration) -> Int {
        Int((time / frame).rounded(.down))
    }

    /// A short reading of a time: `300 ms`, `1.5 ms`, `40 ns`.
    static func describe(_ time: Duration) -> String {
        let (seconds, attoseconds) = time.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000) ms" }
        if nanoseconds % 1_000 == 0 { return "\(Double(nanoseconds) / 1_000_000) ms" }
        return "\(nanoseconds) ns"
    }
}
