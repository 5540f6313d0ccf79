/// The error a `#` in a marble diagram stands for, unless the diagram is given another one.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let source = scheduler.cold("-a#")      // fails with MarbleError() at frame 2
/// ```
public struct MarbleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the error says.
    public var message: String

    /// An error that says `message`.
    public init(_ message: String = "marble error") {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
