import Synchronization

/// Collects what a block prints, from any thread, in the order it was printed.
public final class PrintedOutput: Sendable {
    private let text = Mutex("")

    /// An empty collection.
    public init() {}

    /// Adds what `print(items, separator:, terminator:)` would have written.
    public func write(_ items: [Any], separator: String, terminator: String) {
        let written = items.map { String(describing: $0) }.joined(separator: separator) + terminator
        text.withLock { $0 += written }
    }

    /// Returns once `count` lines have been printed, or after `timeout` (the check then reports what is
    /// missing). For blocks whose output comes from another task or thread after their last line.
    public func waitForLines(_ count: Int, timeout: Duration = .seconds(10)) async {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while lines.count < count, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The printed lines; a final line without a newline counts as a line too.
    public var lines: [String] {
        let all = text.withLock { $0 }
        var lines = all.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}
