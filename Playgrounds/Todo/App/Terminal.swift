import Synchronization
import TodoCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// What a signal handler reaches: only constants holding memory allocated once and atomics, so a handler
// that interrupts the key loop's own use of them makes no access the runtime checks (a global `var` is
// checked for overlapping accesses in debug builds, which a handler's write during a read would trip),
// and takes no lock.
/// The terminal settings to restore.
nonisolated(unsafe) private let savedSettings: UnsafeMutablePointer<termios> = {
    let settings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    settings.initialize(to: termios())
    return settings
}()
/// Whether the terminal is in raw mode (1), so that restoring it is needed once.
private let rawModeIsOn = Atomic<Int32>(0)

/// Shows the cursor, resets the colours and leaves the alternate screen.
private let leaveScreen: StaticString = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"

/// Puts the terminal back as it was. Async-signal-safe: only `tcsetattr` and `write`.
private func restoreTerminalNow() {
    guard rawModeIsOn.exchange(0, ordering: .acquiringAndReleasing) != 0 else { return }
    _ = write(STDOUT_FILENO, leaveScreen.utf8Start, leaveScreen.utf8CodeUnitCount)
    _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, savedSettings)
}

/// The signals that ask the program to end: Ctrl-C sent from outside (raw mode reads Ctrl-C as a key),
/// kills and hang-ups. Their handler only notes the signal; the key loop sees it, saves, restores the
/// terminal, and then lets the signal end the process (``RawTerminal/endBySignalIfOneCame()``).
private let endingSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

/// The signals after which the terminal must be restored at once before the process ends: quits and
/// crashes (no save: the program's state cannot be trusted then).
private let fatalSignals: [Int32] = [SIGQUIT, SIGABRT, SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE]

/// The last of ``endingSignals`` that arrived, or 0. Set by the signal handler, read by the key loop.
private let receivedEndingSignal = Atomic<Int32>(0)

/// The terminal in raw mode, on the alternate screen, for the lifetime of one interactive session.
///
/// Raw mode means keys arrive one by one, unechoed, with Ctrl-C as a key rather than a signal. The
/// terminal is restored by ``restore()``, at exit, and on every signal that ends the process (the
/// handler restores, then lets the signal do what it would have done).
final class RawTerminal {
    /// Switches the terminal to raw mode and the alternate screen.
    ///
    /// - Throws: ``TerminalError`` when standard input is not a terminal whose settings can be changed.
    init() throws(TerminalError) {
        guard tcgetattr(STDIN_FILENO, savedSettings) == 0 else { throw TerminalError("cannot read the terminal settings") }
        var raw = savedSettings.pointee
        cfmakeraw(&raw)
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { throw TerminalError("cannot switch the terminal to raw mode") }
        rawModeIsOn.store(1, ordering: .releasing)
        // Made now, not first in a handler (a global's first use runs its one-time setup, which a
        // handler must not).
        _ = receivedEndingSignal.load(ordering: .relaxed)
        for signal in fatalSignals { installRestoringHandler(for: signal) }
        for signal in endingSignals { installNotingHandler(for: signal) }
        atexit { restoreTerminalNow() }
        // The alternate screen keeps the user's scrollback intact; hide the cursor while browsing.
        Self.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    }

    /// The signal (SIGINT, SIGTERM or SIGHUP) that asked the program to end, or 0 while none did. A
    /// signal interrupts the wait for keys, so the key loop sees it at once.
    static var endingSignal: Int32 { receivedEndingSignal.load(ordering: .acquiring) }

    /// When one of SIGINT, SIGTERM or SIGHUP arrived, ends the process by it, as if the program had no
    /// handler for it (so the parent sees the signal as the cause). Call it after saving and restoring
    /// the terminal; it returns when no such signal came.
    static func endBySignalIfOneCame() {
        let received = receivedEndingSignal.load(ordering: .acquiring)
        guard received != 0 else { return }
        fflush(nil)
        signal(received, SIG_DFL)
        raise(received)
    }

    /// Puts the terminal back as it was before ``init()``. Safe to call more than once.
    func restore() {
        restoreTerminalNow()
    }

    deinit {
        restoreTerminalNow()
    }

    /// The terminal's size in characters, or `nil` when it cannot be read.
    static func size() -> (width: Int, height: Int)? {
        var size = winsize()
        let result = withUnsafeMutablePointer(to: &size) { ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), $0) }
        guard result == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Writes `text` to standard output at once, whole, without buffering. A terminal that stopped
    /// taking output shows up as the end of the input, so a failed write is not reported here.
    static func write(_ text: String) {
        var text = text
        _ = text.withUTF8 { writeFully(STDOUT_FILENO, UnsafeRawBufferPointer($0)) }
    }

    /// Waits up to `milliseconds` for input, then reads what is there.
    ///
    /// - Returns: The bytes read; empty after a timeout; `nil` at the end of the input (the terminal
    ///   went away).
    func read(waiting milliseconds: Int32) throws(TerminalError) -> [UInt8]? {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 {
            if errno == EINTR { return [] }
            throw TerminalError("cannot wait for keys: \(String(cString: strerror(errno)))")
        }
        if ready == 0 { return [] }
        if descriptor.revents & Int16(POLLIN) == 0 && descriptor.revents & Int16(POLLHUP | POLLERR) != 0 { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = systemRead(STDIN_FILENO, &buffer, buffer.count)
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return [] }
            throw TerminalError("cannot read keys: \(String(cString: strerror(errno)))")
        }
        return count == 0 ? nil : Array(buffer.prefix(count))
    }
}

/// Restores the terminal, then lets `signal` take its default course (ending the process, or a crash
/// report), as if no handler had been installed.
private func installRestoringHandler(for signal: Int32) {
    var action = sigaction()
    #if canImport(Darwin)
    action.__sigaction_u.__sa_handler = { received in
        restoreTerminalNow()
        Darwin.signal(received, SIG_DFL)
        raise(received)
    }
    #else
    action.__sigaction_handler.sa_handler = { received in
        restoreTerminalNow()
        Glibc.signal(received, SIG_DFL)
        raise(received)
    }
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(signal, &action, nil)
}

/// Notes `signal` in ``receivedEndingSignal`` and returns, so the key loop can save before the program
/// ends. No `SA_RESTART`: the signal interrupts the wait for keys.
private func installNotingHandler(for signal: Int32) {
    var action = sigaction()
    #if canImport(Darwin)
    action.__sigaction_u.__sa_handler = { received in receivedEndingSignal.store(received, ordering: .releasing) }
    #else
    action.__sigaction_handler.sa_handler = { received in receivedEndingSignal.store(received, ordering: .releasing) }
    #endif
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(signal, &action, nil)
}

/// Why the terminal could not be used.
struct TerminalError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// `read(2)`, under a name that the methods called `read` do not hide.
private func systemRead(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, bytes, count)
}

/// Whether `descriptor` is a terminal.
func isTerminal(_ descriptor: Int32) -> Bool {
    isatty(descriptor) == 1
}
