import Foundation
import Testing
import TodoCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `todo` executable run in a pseudo-terminal, so that it opens its full-screen list: the test types
/// keys into the terminal and reads what the program draws.
final class TerminalRun: @unchecked Sendable {
    let process = Process()
    private let master: Int32
    private let drawn = Drawn()
    /// Signalled when the reading thread stopped.
    private let readerStopped = DispatchSemaphore(value: 0)

    /// What the program drew, filled by the reading thread.
    private final class Drawn: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func append(_ bytes: ArraySlice<UInt8>) { lock.withLock { data.append(contentsOf: bytes) } }
        var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
    }

    /// Starts `todo` with `arguments` on a new pseudo-terminal of `columns` × `rows` (80 × 24 unless
    /// given), with `home` as its home folder.
    init(
        _ arguments: [String], home: String, environment: [String: String] = [:], columns: UInt16 = 80, rows: UInt16 = 24
    ) throws {
        let path = try #require(TodoBinary.path, "the todo executable was not found beside the tests; build with `swift build`")
        // Close-on-exec: no other test's child may hold this terminal (the child gets it as its standard
        // input and output, which the spawn duplicates without the flag).
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        self.master = master
        try #require(master >= 0 && PseudoTerminal.grantpt(master) == 0 && PseudoTerminal.unlockpt(master) == 0, "no pseudo-terminal")
        let slaveName = String(cString: try #require(PseudoTerminal.ptsname(master)))
        let slave = open(slaveName, O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(slave >= 0, "cannot open \(slaveName)")
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = withUnsafeMutablePointer(to: &size) { ioctl(master, UInt(TIOCSWINSZ), $0) }

        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ["HOME": home, "PATH": "/usr/bin:/bin", "TERM": "xterm"]
            .merging(environment) { _, given in given }
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = terminal
        process.standardOutput = terminal
        process.standardError = terminal
        // The child inherits the signal mask of the thread that starts it, and the test runner's threads
        // block the signals the program must receive: unblock them on this thread while it starts.
        var ending = sigset_t()
        var previous = sigset_t()
        sigemptyset(&ending)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&ending, signal) }
        pthread_sigmask(SIG_UNBLOCK, &ending, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        close(slave)

        // Drain what the program draws, so that it never blocks on a full terminal. The read ends (EIO)
        // when the program has ended.
        // A thread of its own: a blocking read must not hold one of the few threads of a shared pool.
        let (drawn, readerStopped) = (self.drawn, self.readerStopped)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(master, &buffer, buffer.count)
                if count <= 0 { break }
                drawn.append(buffer[0..<count])
            }
            readerStopped.signal()
        }.start()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // Closed only once the reader stopped: a number closed under it could be reused by another
        // test's terminal, whose output it would then take.
        if readerStopped.wait(timeout: .now() + 10) == .success { close(master) }
    }

    /// Everything drawn so far, as text (escape codes included).
    var screen: String { drawn.text }

    /// The rows of the screen as a terminal of `height` rows would show them after everything drawn so
    /// far: the program moves to a row (`ESC[r;1H`), blanks it (`ESC[2K`) and writes it whole, and
    /// clears the screen with `ESC[2J`; styles and other codes are left out.
    func rows(height: Int) -> [String] {
        var rows = Array(repeating: "", count: height)
        var row = 0
        var characters = screen.makeIterator()
        while let character = characters.next() {
            guard character == "\u{1B}" else {
                if character.isNewline || character.asciiValue.map({ $0 < 0x20 }) == true { continue }
                if rows.indices.contains(row) { rows[row].append(character) }
                continue
            }
            guard characters.next() == "[" else { continue }
            var parameters = ""
            while let next = characters.next() {
                guard let value = next.asciiValue, !(0x40...0x7E).contains(value) else {
                    switch next {
                    case "H": row = (Int(parameters.split(separator: ";").first ?? "1") ?? 1) - 1
                    case "J" where parameters == "2": rows = Array(repeating: "", count: height)
                    case "K" where rows.indices.contains(row): rows[row] = ""
                    default: break
                    }
                    break
                }
                parameters.append(next)
            }
        }
        return rows
    }

    /// Waits up to `seconds` for the screen of `height` rows to satisfy `condition`.
    func waitUntilScreen(height: Int, seconds: Double = 30, _ condition: ([String]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(rows(height: height)) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(rows(height: height))
    }

    /// Types `text` (each character is a key; `\r` is Enter).
    func type(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(master, &bytes, bytes.count)
    }

    /// Waits up to `seconds` for `text` to be drawn. Polls with `Task.sleep`, so the wait holds none of
    /// the test pool's few threads (a blocked one starves the other suites' tasks).
    func waitUntilDrawn(_ text: String, seconds: Double = 60) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if screen.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return screen.contains(text)
    }

    /// Waits up to `seconds` for the program to end and for everything it drew to be read; `false` if
    /// it is still running then.
    func waitForExit(seconds: Double = 60) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        guard !process.isRunning else { return false }
        let stopped = readerStopped
        let readerEnded = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: stopped.wait(timeout: .now() + 30) == .success)
            }
        }
        if readerEnded { readerStopped.signal() }
        return true
    }
}

/// The pseudo-terminal functions, which Glibc's module does not export (they need `_XOPEN_SOURCE`):
/// looked up by name.
enum PseudoTerminal {
    #if canImport(Darwin)
    static func grantpt(_ descriptor: Int32) -> Int32 { Darwin.grantpt(descriptor) }
    static func unlockpt(_ descriptor: Int32) -> Int32 { Darwin.unlockpt(descriptor) }
    static func ptsname(_ descriptor: Int32) -> UnsafeMutablePointer<CChar>? { Darwin.ptsname(descriptor) }
    #else
    private static func function<F>(_ name: String, as type: F.Type) -> F {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { fatalError("no \(name) in the C library") }
        return unsafeBitCast(symbol, to: type)
    }
    static let grantpt = function("grantpt", as: (@convention(c) (Int32) -> Int32).self)
    static let unlockpt = function("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
    static let ptsname = function("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
    #endif
}

/// Serialized: the tests wait in real time, and programs started side by side on a small machine would
/// make those waits long.
@Suite("todo, run in a terminal", .serialized)
struct InteractiveEndToEndTests {
    let folder = TemporaryFolder()

    /// The titles in the list file, or `nil` when there is none.
    func savedTitles() throws -> [String]? {
        guard case .loaded(let list) = try TodoFile(path: folder.file("list.json")).load() else { return nil }
        return list.items.map(\.title)
    }

    /// The save delay the program is given: far beyond the test, so only a save on the way out can put
    /// the change in the file.
    let neverByTimer = ["TODO_SAVE_DELAY_MS": "600000"]

    @Test("two todos on one file, at 40×10 and 80×24: one deletes what the other ticked; the item stays deleted, and the status says so in full",
          arguments: [(UInt16(40), UInt16(10)), (80, 24)])
    func deleteWinsOverTick(columns: UInt16, rows: UInt16) async throws {
        let file = folder.file("list.json")
        try TodoFile(path: file).save(TodoList(titles: ["Buy milk", "eggs"]))
        let run = try TerminalRun(["--file", file], home: folder.path, environment: ["TODO_SAVE_DELAY_MS": "0"],
                                  columns: columns, rows: rows)
        #expect(await run.waitUntilDrawn("? shows every key"))
        #expect(await run.waitUntilDrawn(Keymap.helpLine(width: Int(columns))), "the key hints that fit, whole")
        // Another todo ticks "Buy milk" and saves...
        let other = try TodoBinary.run(["--file", file], input: "done 1\n", home: folder.path)
        #expect(other.status == 0)
        // ...while this one, which still shows it unticked, deletes it.
        run.type("d")
        let notice = "Merged: \"Buy milk\" stays deleted (ticked in another window)"
        let height = Int(rows)
        #expect(await run.waitUntilScreen(height: height) { statusText(of: $0).hasSuffix(notice) },
                "the status says what the merge did, whole: \(statusText(of: run.rows(height: height)))")
        let screen = run.rows(height: height)
        #expect(screen.allSatisfy { $0.terminalColumns <= Int(columns) }, "no row is wider than the terminal: \(screen)")
        #expect(screen[0].hasSuffix("1 of 1 left"))
        #expect(screen[1] == ">  1. [ ] eggs")
        #expect(screen[height - 1] == Keymap.helpLine(width: Int(columns)))
        #expect(try TodoFile(path: file).load().list.items.map(\.title) == ["eggs"])
        run.type("q")
        try #require(await run.waitForExit())
        #expect(try TodoFile(path: file).load().list.items.map(\.title) == ["eggs"], "the delete stays after the last save")
    }

    @Test("a change followed at once by q is in the file (q saves before quitting)")
    func quitSaves() async throws {
        let run = try TerminalRun(["--file", folder.file("list.json")], home: folder.path, environment: neverByTimer)
        #expect(await run.waitUntilDrawn("? shows every key"))
        run.type("atea\rq")
        try #require(await run.waitForExit(), "q quit without asking: the change was saved first")
        #expect(run.process.terminationStatus == 0)
        #expect(try savedTitles() == ["tea"])
    }

    @Test("a change followed at once by SIGTERM, SIGINT or SIGHUP is in the file, and the program ends by that signal",
          arguments: [SIGTERM, SIGINT, SIGHUP])
    func signalSaves(signal: Int32) async throws {
        let run = try TerminalRun(["--file", folder.file("list.json")], home: folder.path, environment: neverByTimer)
        #expect(await run.waitUntilDrawn("? shows every key"))
        run.type("atea\r")
        #expect(await run.waitUntilDrawn("added \"tea\""))
        #expect(try savedTitles() == nil, "nothing is saved before the signal")
        kill(run.process.processIdentifier, signal)
        try #require(await run.waitForExit())
        #expect(run.process.terminationReason == .uncaughtSignal)
        #expect(run.process.terminationStatus == signal)
        #expect(try savedTitles() == ["tea"], "the waiting save was made before the signal ended the program")
        #expect(run.screen.hasSuffix("\u{1B}[?1049l"), "the terminal was restored")
    }
}
