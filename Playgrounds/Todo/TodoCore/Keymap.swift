/// What a key does on the interactive screen.
public enum ScreenCommand: CaseIterable, Sendable {
    /// Move the cursor one row up.
    case cursorUp
    /// Move the cursor one row down.
    case cursorDown
    /// Move the cursor to the first row.
    case cursorFirst
    /// Move the cursor to the last row.
    case cursorLast
    /// Mark the item under the cursor done, or not done.
    case toggle
    /// Type a new item in the line editor.
    case add
    /// Change the title of the item under the cursor in the line editor.
    case edit
    /// Delete the item under the cursor.
    case delete
    /// Move the item under the cursor one row up.
    case moveUp
    /// Move the item under the cursor one row down.
    case moveDown
    /// Show the next filter: all, active, done.
    case filter
    /// Step back over the last change.
    case undo
    /// Step forward over the last undo.
    case redo
    /// Show every key.
    case help
    /// Draw the whole screen again.
    case redraw
    /// Save the list to another file (typed in the line editor) and keep saving there.
    case saveAs
    /// Leave (the list is already saved; with changes that could not be saved, ask first).
    case quit
}

/// One line of the key reference: the keys, and what they do.
public struct KeyBinding: Sendable {
    /// The keys, the first being the one the full help lists first.
    public let keys: [Key]
    /// What they do.
    public let command: ScreenCommand
    /// The short label in the help line at the bottom of the screen (`a add`); empty for a key the
    /// help line leaves to the full help.
    public let label: String
    /// The explanation in the full help (`?`) and in `todo --help`.
    public let explanation: String
}

/// The keys of the interactive screen, in one table: the screen looks keys up in it, and the help line,
/// the `?` page and `todo --help` are written from it, so the help never lists a key that does nothing.
///
/// ```swift
/// print(Keymap.command(for: .character(" ")) == .toggle)
/// // Prints "true"
/// ```
public enum Keymap {
    /// Every binding, in the order the help lists them.
    public static let bindings: [KeyBinding] = [
        KeyBinding(keys: [.up, .character("k")], command: .cursorUp, label: "↑↓ select",
                   explanation: "select the row above"),
        KeyBinding(keys: [.down, .character("j")], command: .cursorDown, label: "",
                   explanation: "select the row below"),
        KeyBinding(keys: [.home, .character("g")], command: .cursorFirst, label: "",
                   explanation: "select the first row"),
        KeyBinding(keys: [.end, .character("G")], command: .cursorLast, label: "",
                   explanation: "select the last row"),
        KeyBinding(keys: [.character(" "), .character("x"), .enter], command: .toggle, label: "x done",
                   explanation: "mark the selected item done, or not done"),
        KeyBinding(keys: [.character("a")], command: .add, label: "a add",
                   explanation: "add an item (Enter adds it, Esc cancels)"),
        KeyBinding(keys: [.character("e")], command: .edit, label: "e edit",
                   explanation: "edit the selected title (Enter saves, Esc cancels)"),
        KeyBinding(keys: [.character("d"), .delete], command: .delete, label: "d del",
                   explanation: "delete the selected item"),
        KeyBinding(keys: [.character("K"), .shiftUp], command: .moveUp, label: "K/J move",
                   explanation: "move the selected item up"),
        KeyBinding(keys: [.character("J"), .shiftDown], command: .moveDown, label: "",
                   explanation: "move the selected item down"),
        KeyBinding(keys: [.character("f")], command: .filter, label: "f filter",
                   explanation: "show all, then active, then done items"),
        KeyBinding(keys: [.character("u")], command: .undo, label: "u undo",
                   explanation: "undo the last change"),
        KeyBinding(keys: [.character("r"), .control("r")], command: .redo, label: "r redo",
                   explanation: "redo the last undone change"),
        KeyBinding(keys: [.character("?")], command: .help, label: "? help",
                   explanation: "show this help (any key goes back)"),
        KeyBinding(keys: [.control("l")], command: .redraw, label: "",
                   explanation: "draw the whole screen again"),
        KeyBinding(keys: [.character("w")], command: .saveAs, label: "",
                   explanation: "save the list to another file, and keep saving there"),
        KeyBinding(keys: [.character("q"), .control("c"), .control("d")], command: .quit, label: "q quit",
                   explanation: "quit (asks first if a change could not be saved)"),
    ]

    private static let commands: [Key: ScreenCommand] = Dictionary(
        bindings.flatMap { binding in binding.keys.map { ($0, binding.command) } },
        uniquingKeysWith: { first, _ in first })

    /// The command bound to `key`, if any.
    public static func command(for key: Key) -> ScreenCommand? {
        commands[key]
    }

    /// The labels of the help line, most needed first: help and quit, then the commands in the order of
    /// ``bindings``, and the arrows last (they explain themselves, and `?` lists them).
    public static let hints: [String] = {
        let first: Set<ScreenCommand> = [.help, .quit]
        let last: Set<ScreenCommand> = [.cursorUp, .cursorDown, .cursorFirst, .cursorLast]
        let ordered = bindings.filter { first.contains($0.command) }
            + bindings.filter { !first.contains($0.command) && !last.contains($0.command) }
            + bindings.filter { last.contains($0.command) }
        return ordered.map(\.label).filter { !$0.isEmpty }
    }()

    /// The help line at the bottom of a screen `width` columns wide: the ``hints`` that fit, whole, most
    /// needed first; `?` shows every key. At 80 columns every hint but the arrows fits.
    ///
    /// ```swift
    /// print(Keymap.helpLine(width: 30))
    /// // Prints "? help  q quit  x done  a add"
    /// ```
    public static func helpLine(width: Int) -> String {
        var line = ""
        for hint in hints {
            let candidate = line.isEmpty ? hint : line + "  " + hint
            if candidate.terminalColumns <= width { line = candidate }
        }
        return line
    }

    /// One line per binding: `Up, k            select the row above` (what `todo --help` lists).
    public static let reference: String = reference(width: .max, indent: 0).joined(separator: "\n")

    /// The key reference laid out for a screen `width` columns wide, each line indented by `indent`
    /// and never wider than `width`: in two aligned columns (the keys, then what they do, wrapped
    /// under its own column) when the explanations get at least 20 columns that way; otherwise in one
    /// column, each binding's keys on a line of their own and its explanation indented below them.
    ///
    /// ```swift
    /// print(Keymap.reference(width: 60, indent: 2)[0])
    /// print(Keymap.reference(width: 30, indent: 0).prefix(2))
    /// // Prints "  Up, k              select the row above", "[\"Up, k\", \"  select the row above\"]"
    /// ```
    public static func reference(width: Int, indent: Int) -> [String] {
        let rows = bindings.map { binding in (binding.keys.map(\.description).joined(separator: ", "), binding.explanation) }
        let keysWidth = rows.map(\.0.terminalColumns).max() ?? 0
        let margin = String(repeating: " ", count: indent)
        let column = indent + keysWidth + 2
        if width - column >= 20 {
            return rows.flatMap { keys, explanation in
                explanation.wrapped(toColumns: width - column).enumerated().map { index, line in
                    let lead = index == 0 ? margin + keys : ""
                    return lead + String(repeating: " ", count: column - lead.terminalColumns) + line
                }
            }
        }
        return rows.flatMap { keys, explanation in
            (margin + keys).wrapped(toColumns: width)
                + explanation.wrapped(toColumns: width - indent - 2).map { margin + "  " + $0 }
        }
    }
}
