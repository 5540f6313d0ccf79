import Stillwater

/// An event with the virtual time it was sent at: one entry of a ``Recorder``'s ``Recorder/timeline``.
///
/// ```swift
/// let expected: [Recorded<Int>] = [.next(.milliseconds(300), 1), .completed(.milliseconds(400))]
/// print(expected[0])
/// // Prints "next(1) at 300 ms"
/// ```
public struct Recorded<Value> {
    /// When the event was sent, on the scheduler's clock.
    public var time: Duration
    /// The event.
    public var event: Event<Value>

    /// An `event` sent at `time`.
    public init(time: Duration, event: Event<Value>) {
        self.time = time
        self.event = event
    }

    /// A value sent at `time`.
    public static func next(_ time: Duration, _ value: Value) -> Recorded {
        Recorded(time: time, event: .next(value))
    }

    /// A completion at `time`.
    public static func completed(_ time: Duration) -> Recorded {
        Recorded(time: time, event: .completed)
    }

    /// A failure with `error` at `time`.
    public static func error(_ time: Duration, _ error: any Error) -> Recorded {
        Recorded(time: time, event: .error(error))
    }
}

extension Recorded: Equatable where Value: Equatable {}
extension Recorded: Sendable where Value: Sendable {}

extension Recorded: CustomStringConvertible {
    /// `next(1) at 300 ms`.
    public var description: String {
        "\(event) at \(Marbles.describe(time))"
    }
}
