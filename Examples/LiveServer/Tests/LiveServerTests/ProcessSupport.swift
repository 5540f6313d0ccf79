import Foundation
import LiveServerCore
import Synchronization

/// The `live-server` executable built beside the test bundle (`swift build` builds it; so does `swift test`).
func liveServerExecutable() throws -> URL {
    let directories = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        .compactMap { $0?.deletingLastPathComponent() }
    for directory in directories {
        let candidate = directory.appendingPathComponent("live-server")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw TestFailure("live-server is not built beside the tests (looked in \(directories.map(\.path))); run swift build first")
}

/// A `live-server` process started for a test, its output collected as it comes.
final class ServerProcess: Sendable {
    let process: Process
    private let output = Locked((stdout: "", stderr: ""))
    private let pipes: (out: Pipe, err: Pipe)

    /// Starts `live-server` with `arguments`.
    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = try liveServerExecutable()
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged["PORT"] = nil
        merged["LIVE_DATA"] = nil
        merged["LIVE_TEAMS"] = nil
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let out = Pipe(), err = Pipe()
        pipes = (out, err)
        process.standardOutput = out
        process.standardError = err
        let output = self.output
        out.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.withLock { $0.stdout += String(decoding: data, as: UTF8.self) }
        }
        err.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            output.withLock { $0.stderr += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// What the process wrote to standard output so far.
    var stdout: String { output.withLock { $0.stdout } }
    /// What the process wrote to standard error so far.
    var stderr: String { output.withLock { $0.stderr } }

    /// The port from the `listening on` line, once it is printed.
    func port(within seconds: Double = 60) async throws -> Int {
        var found: Int?
        try await eventually(within: seconds, "the server's listening line (stderr: \(stderr))") {
            guard let line = stdout.split(separator: "\n").first(where: { $0.contains("listening on http://") }),
                  let range = line.range(of: #":(\d+)/"#, options: .regularExpression)
            else { return !process.isRunning && { found = -1; return true }() }
            found = Int(line[range].dropFirst().dropLast())
            return true
        }
        guard let found, found > 0 else { throw TestFailure("the server exited: \(stderr)") }
        return found
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the process to exit within `seconds` and returns its status and how long it took; what
    /// it wrote is all in ``stdout`` and ``stderr`` then.
    func exit(within seconds: Double) async throws -> (status: Int32, took: Duration) {
        let start = ContinuousClock.now
        try await eventually(within: seconds, "the server's exit") { !process.isRunning }
        let took = ContinuousClock.now - start
        // The handlers may not have read the last bytes yet: stop them and read the rest here.
        for (pipe, isOut) in [(pipes.out, true), (pipes.err, false)] {
            pipe.fileHandleForReading.readabilityHandler = nil
            let rest = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            output.withLock { if isOut { $0.stdout += rest } else { $0.stderr += rest } }
        }
        return (process.terminationStatus, took)
    }

    /// Kills the process if it still runs (a test's cleanup).
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A new empty folder for one test's data, removed by `body`'s end.
func withDataFolder<R>(_ body: (String) async throws -> R) async throws -> R {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("live-test-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// A TCP connection to the server on loopback that connects (and sends `text`, if given), then holds the
/// socket until it is freed.
final class RawConnection: Sendable {
    let socket: Int32

    init(port: Int, sending text: String? = nil) throws {
        socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestFailure("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw TestFailure("connect() failed") }
        if let text { _ = text.withCString { Foundation.send(socket, $0, strlen($0), 0) } }
    }

    /// Whether the server closed the connection (a read returns end of file, or fails), waiting at most
    /// `seconds`.
    func isClosedByServer(within seconds: Int) -> Bool {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno != EAGAIN && errno != EWOULDBLOCK }
        }
    }

    deinit { close(socket) }
}

/// The request line and headers of a WebSocket upgrade to `path`, with `headers` added.
func upgradeRequest(port: Int, path: String, headers: [String: String] = [:]) -> String {
    var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    text += "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
    return text + "\r\n"
}

/// A TCP port on loopback that was free a moment ago.
func freePort() throws -> Int {
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw TestFailure("socket() failed") }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
        }
    }
    guard bound else { throw TestFailure("bind() failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Runs `executable` with `arguments` to its end, its output discarded, blocking the calling thread;
/// throws when it fails. (Spawned and waited for here: `Process.waitUntilExit` was seen never to return
/// for a script that starts a daemon.)
func runCommand(_ executable: String, _ arguments: [String]) throws {
    var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { throw TestFailure("cannot run \(executable): \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // Exited normally with status 0 (the wait status's low 7 bits are the signal, the next 8 the status).
    guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
        throw TestFailure("\(executable) \(arguments.joined(separator: " ")) failed (wait status \(status))")
    }
}
