import TodoCore

/// Runs the full-screen list until the user quits, the terminal goes away or a signal asks the program
/// to end; the terminal is restored whatever happens, and every way out saves a waiting change first.
///
/// - Parameters:
///   - scheduler: The scheduler the session's delayed save waits on; run on every wake-up of the loop.
///   - title: The start of the header line.
///   - notice: Shown in the status line at the start (a set-aside file, say).
/// - Returns: The exit status. After SIGINT, SIGTERM or SIGHUP it does not return: the change is saved,
///   the terminal restored, and the signal ends the process as it would have without the program's handler.
func runInteractive(session: TodoSession, scheduler: PollingScheduler, title: String, notice: String?) -> Int32 {
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
        scheduler.runDue()
        if RawTerminal.endingSignal != 0 { break loop }
        RawTerminal.write(frame + ANSI.cursor(screen.cursorPosition))
        frame = ""
        let keys: [Key]
        do {
            // A lone Escape is told from the start of an arrow key by a short pause; a waiting save
            // shortens the wait to its due time.
            let pause: Int32 = decoder.hasPending ? 50 : 200
            var wait = pause
            if let due = scheduler.timeUntilNextDue {
                wait = Int32(min(Double(wait), (due / .milliseconds(1)).rounded(.up)))
            }
            guard let bytes = try terminal.read(waiting: wait) else { break loop }
            // Nothing read is a pause only after the whole wait: a wait cut short by a save coming due
            // must not split an arrow key (or a character of several bytes) whose rest is on its way.
            keys = bytes.isEmpty ? (wait < pause ? [] : decoder.flush()) : decoder.feed(bytes)
        } catch {
            session.saveNow()
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
    session.saveNow()
    terminal.restore()
    if let problem = session.saveProblem.value {
        printError("todo: \(problem)")
        status = 1
    }
    RawTerminal.endBySignalIfOneCame()
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
