/// The one-line text editor at the bottom of the interactive screen, as a value: text, a cursor, and what
/// each editing key does to them.
///
/// ```swift
/// var editor = LineEditor(text: "mlk")
/// for key: Key in [.left, .left, .character("i")] { _ = editor.handle(key) }
/// print(editor.text, editor.cursor)
/// // Prints "milk 2"
/// ```
public struct LineEditor: Equatable, Sendable {
    /// What the editor asks its owner to do after a key.
    public enum Outcome: Equatable, Sendable {
        /// Keep editing.
        case editing
        /// Enter was pressed: use ``LineEditor/text``.
        case submit
        /// Escape (or Ctrl-C) was pressed: drop the text.
        case cancel
    }

    /// The characters typed.
    public private(set) var characters: [Character]
    /// Where the next character goes, from 0 (before the first) to the number of characters (after the
    /// last).
    public private(set) var cursor: Int

    /// An editor holding `text`, with the cursor after it.
    public init(text: String = "") {
        characters = Array(text)
        cursor = characters.count
    }

    /// The text typed.
    public var text: String { String(characters) }

    /// Applies `key`: characters are inserted at the cursor (a combining mark, or an emoji's variation
    /// selector, joins the character before it); Left, Right, Home, End (and Ctrl-A, Ctrl-E)
    /// move it; Backspace and Delete remove a character; Ctrl-U removes everything before the cursor,
    /// Ctrl-K everything after it, Ctrl-W the word before it. Other keys are ignored.
    public mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .enter: return .submit
        case .escape, .control("c"): return .cancel
        case .character(let character):
            // A combining mark or an emoji modifier joins the character before it.
            if cursor > 0, case let joined = String(characters[cursor - 1]) + String(character), joined.count == 1 {
                characters[cursor - 1] = Character(joined)
            } else {
                characters.insert(character, at: cursor)
                cursor += 1
            }
        case .tab:
            characters.insert(" ", at: cursor)
            cursor += 1
        case .left: cursor = max(cursor - 1, 0)
        case .right: cursor = min(cursor + 1, characters.count)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = characters.count
        case .backspace where cursor > 0:
            cursor -= 1
            characters.remove(at: cursor)
        case .delete where cursor < characters.count, .control("d") where cursor < characters.count:
            characters.remove(at: cursor)
        case .control("u"):
            characters.removeFirst(cursor)
            cursor = 0
        case .control("k"):
            characters.removeLast(characters.count - cursor)
        case .control("w"):
            var start = cursor
            while start > 0, characters[start - 1] == " " { start -= 1 }
            while start > 0, characters[start - 1] != " " { start -= 1 }
            characters.removeSubrange(start..<cursor)
            cursor = start
        default: break
        }
        return .editing
    }

    /// The part of `prompt` + text that fits in `width` terminal columns, and the column of the cursor in
    /// it: the line scrolls sideways to keep the cursor, and the character under it, visible.
    ///
    /// Widths are counted in columns (``Swift/Character/terminalColumns``), so wide characters (CJK,
    /// emoji) scroll the line sooner and are never cut in half. The last column stays free for the
    /// cursor after the text.
    ///
    /// ```swift
    /// let line = LineEditor(text: "買い物 牛乳と卵").visibleLine(prompt: "add: ", width: 17)
    /// print(line.text, line.cursorColumn)
    /// // Prints "add: 物 牛乳と卵 16"
    /// ```
    ///
    /// - Precondition: `width` is more than the prompt's columns.
    public func visibleLine(prompt: String, width: Int) -> (text: String, cursorColumn: Int) {
        let promptColumns = prompt.terminalColumns
        let room = max(width - promptColumns - 1, 1)
        let columns = characters.map(\.terminalColumns)
        // Start as far left as keeps the cursor's character (none after the text) inside the room.
        var first = cursor
        var used = cursor < columns.count ? columns[cursor] : 0
        while first > 0, used + columns[first - 1] <= room {
            first -= 1
            used += columns[first]
        }
        var end = first
        var shownColumns = 0
        while end < columns.count, shownColumns + columns[end] <= room {
            shownColumns += columns[end]
            end += 1
        }
        let cursorColumn = promptColumns + columns[first..<cursor].reduce(0, +)
        return (prompt + String(characters[first..<end]), cursorColumn)
    }
}
