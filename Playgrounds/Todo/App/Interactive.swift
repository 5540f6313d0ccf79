import TodoCore

/// Runs the full-screen list until the user quits or the terminal goes away; the terminal is restored
/// whatever happens.
///
/// - Parameters:
///   - title: The start of the header line.
///   - notice: Shown in the status line at the start (a set-aside file, say).
/// - Returns: The exit status.
func runInteractive(session: TodoSession, title: String, notice: String?) -> Int32 {
    let terminal: RawTerminal
    do {
        terminal = try RawTerminal()
    } catch {
        printError("todo: \(error)")
        return 1
    }
    defer { terminal.restore() }

    var frame = ""
    var size = RawTerminal.size() ?? (width: 80, height: 24)
    let screen = TodoScreen(session: session, width: size.width, height: size.height, title: title) { write in
        frame += ANSI.text(for: write)
    }
    if let notice { screen.showNotice(notice) }
    var decoder = KeyDecoder()
    var status: Int32 = 0

    loop: while true {
        RawTerminal.write(frame + ANSI.cursor(screen.cursorPosition))
        frame = ""
        let keys: [Key]
        do {
            // A lone Escape is told from the start of an arrow key by a short pause.
            guard let bytes = try terminal.read(waiting: decoder.hasPending ? 50 : 200) else { break loop }
            keys = bytes.isEmpty ? decoder.flush() : decoder.feed(bytes)
        } catch {
            terminal.restore()
            printError("todo: \(error)")
            status = 1
            break loop
        }
        for key in keys where !screen.handle(key) { break loop }
        if let now = RawTerminal.size(), now != size {
            size = now
            screen.resize(width: now.width, height: now.height)
        }
    }
    terminal.restore()
    if let problem = session.saveProblem.value {
        printError("todo: \(problem)")
        status = 1
    }
    return status
}

/// The escape codes that draw a ``ScreenWrite`` on an ANSI terminal.
enum ANSI {
    /// `write` as escape codes and text.
    static func text(for write: ScreenWrite) -> String {
        switch write {
        case .clear:
            return "\u{1B}[0m\u{1B}[2J"
        case .line(let row, let line):
            return "\u{1B}[\(row + 1);1H\u{1B}[0m\u{1B}[2K" + style(line.style) + line.text + "\u{1B}[0m"
        }
    }

    /// Shows the cursor at `position`, or hides it.
    static func cursor(_ position: (row: Int, column: Int)?) -> String {
        guard let position else { return "\u{1B}[?25l" }
        return "\u{1B}[\(position.row + 1);\(position.column + 1)H\u{1B}[?25h"
    }

    private static func style(_ style: ScreenLine.Style) -> String {
        switch style {
        case .plain: ""
        case .header: "\u{1B}[1m"
        case .selected: "\u{1B}[7m"
        case .dim: "\u{1B}[2m"
        case .warning: "\u{1B}[1;31m"
        }
    }
}
