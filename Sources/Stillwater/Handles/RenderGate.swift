/// Renders a piece of output only when its input changed: the first input renders, an input equal to the
/// last rendered one is skipped.
///
/// Give each component (a row, a header, a line of a terminal screen) a gate, and feed it the component's
/// inputs every time its parent rebuilds. When the inputs are `Equatable` (callbacks passed as
/// ``ActionHandle``s rather than closures), the gate renders only the components whose inputs changed.
///
/// ```swift
/// let gate = RenderGate<String> { print("draw \($0)") }
/// for title in ["Inbox", "Inbox", "Inbox (1)", "Inbox (1)"] { gate.update(title) }
/// print(gate.renderCount)
/// // Prints "draw Inbox", "draw Inbox (1)", "2"
/// ```
///
/// Thread safety: a gate belongs to one thread of control at a time, like the output it draws; it is not
/// `Sendable`, so Swift 6 keeps it from being shared across threads or tasks. Feeding it from the observer
/// of one stream is safe even when that stream's values arrive on different threads, because a stream never
/// delivers two events at the same time. To render from several sources, merge them first
/// (`Observable.merge`, `combineLatest`) and feed the gate from the merged stream.
///
/// Reentrancy: an `update(_:)` made from inside `render` does not nest. It is queued and handled after the
/// current render returns, as if it had been made just after it, so renders never overlap and happen in
/// the order of the updates.
///
/// - Complexity: An update costs one comparison with the last rendered input, plus the render when they
///   differ.
public final class RenderGate<Input: Equatable> {
    private let render: (Input) -> Void
    private var rendered: Input?
    private var isRendering = false
    /// Updates made from inside `render`, handled in order once it returns.
    private var pending: [Input] = []
    private var forcesNextRender = false

    /// The number of times the gate has called `render`.
    public private(set) var renderCount = 0

    /// Creates a gate that calls `render` with each input that differs from the last one it rendered.
    ///
    /// - Parameter render: Draws the output for one input. It may call ``update(_:)`` on this gate; such
    ///   updates are handled after it returns.
    public init(_ render: @escaping (Input) -> Void) {
        self.render = render
    }

    /// The last input the gate rendered, or `nil` before the first render.
    public var lastRendered: Input? {
        rendered
    }

    /// Renders `input` if it is the first input, or differs from the last rendered input; otherwise does
    /// nothing.
    ///
    /// ```swift
    /// let gate = RenderGate<Int> { print("render \($0)") }
    /// gate.update(1)
    /// gate.update(1)   // equal to the last rendered input: skipped
    /// gate.update(2)
    /// // Prints "render 1", "render 2"
    /// ```
    public func update(_ input: Input) {
        if isRendering {
            pending.append(input)
            return
        }
        isRendering = true
        defer { isRendering = false }
        renderIfChanged(input)
        var next = 0
        while next < pending.count {
            renderIfChanged(pending[next])
            next += 1
        }
        pending.removeAll()
    }

    /// Makes the next ``update(_:)`` render even when its input equals the last rendered one, for when the
    /// output was drawn over (a cleared screen, a reused cell).
    ///
    /// ```swift
    /// let gate = RenderGate<String> { print("draw \($0)") }
    /// gate.update("Inbox")
    /// gate.invalidate()
    /// gate.update("Inbox")
    /// // Prints "draw Inbox", "draw Inbox"
    /// ```
    public func invalidate() {
        forcesNextRender = true
    }

    private func renderIfChanged(_ input: Input) {
        if !forcesNextRender, let rendered, rendered == input { return }
        forcesNextRender = false
        rendered = input
        renderCount += 1
        render(input)
    }
}
