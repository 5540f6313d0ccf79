import Foundation
import LiveServerCore
import Synchronization

// What the load programs (live-load, live-cluster) share: starting `live-server` children, signals, figures.

/// Raises this process's limit of open files to its hard limit (every client is a socket).
public func raiseOpenFileLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

/// Calls `handler` on SIGTERM or SIGINT (`timeout`, Ctrl-C) instead of ending at once, so the program can
/// end its children first. Keep the returned sources for as long as the handler should run.
public func onTerminationSignals(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
    let queue = DispatchQueue(label: "load.signals")
    return [SIGTERM, SIGINT].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }
}

/// The memory of process `pid` from `/proc/PID/status` (Linux): resident now and the most resident so
/// far, in KiB; zeros where it cannot be read.
public func processMemory(pid: Int32) -> (residentKiB: Int, peakKiB: Int) {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return (0, 0) }
    var memory = (residentKiB: 0, peakKiB: 0)
    for line in status.split(separator: "\n") {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count >= 2, let value = Int(parts[1]) else { continue }
        if parts[0] == "VmRSS:" { memory.residentKiB = value }
        if parts[0] == "VmHWM:" { memory.peakKiB = value }
    }
    return memory
}

/// How many times the threads of process `pid` have been switched out (voluntarily, to wait, and not):
/// the sum of `voluntary_ctxt_switches` and `nonvoluntary_ctxt_switches` over `/proc/PID/task/*/status`.
/// Each wake-up of a sleeping thread ends in one such switch, so the difference over an idle window
/// counts the process's wake-ups; threads that ended meanwhile drop out of the sum. Nil without `/proc`.
public func processContextSwitches(pid: Int32) -> Int? {
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
    var total = 0
    for task in tasks {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, parts[0] == "voluntary_ctxt_switches:" || parts[0] == "nonvoluntary_ctxt_switches:",
                  let value = Int(parts[1]) else { continue }
            total += value
        }
    }
    return total
}

/// A duration in seconds.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The value below which the fraction `p` of `sorted` lies (0 for none).
public func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// The `live-server` program beside this one, or `nil` (with a line on standard output) when it is missing.
public func siblingServer() -> URL? {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("live-server")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        print("\(binary.path) is missing: build both (swift build)")
        return nil
    }
    return binary
}

/// Starts `binary` with `arguments` and waits for its "listening on" line.
///
/// - Returns: The process and the port it listens on, or `nil` when it exited first or printed no such line
///   within `seconds`.
public func startServer(_ binary: URL, arguments: [String], within seconds: Double = 60) async throws -> (Process, Int)? {
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    let output = Pipe()
    final class Printed: Sendable { let text = Mutex("") }
    let printed = Printed()
    output.fileHandleForReading.readabilityHandler = { handle in
        let data = handle.availableData
        printed.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }
    process.standardOutput = output
    try process.run()
    let deadline = ContinuousClock.now + .seconds(seconds)
    while process.isRunning, ContinuousClock.now < deadline {
        if let line = printed.text.withLock({ $0 }).split(separator: "\n").first(where: { $0.contains("listening on") }),
           let range = line.range(of: #":(\d+)/"#, options: .regularExpression),
           let port = Int(line[range].dropFirst().dropLast()) {
            return (process, port)
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    if process.isRunning { process.terminate() }
    return nil
}

/// A random command of a load client whose board shows `items`, named `name` (a text without spaces,
/// unique per command).
///
/// While the board has fewer than `fewest` items the command is an add; otherwise, of every 100 commands
/// about 15 are adds (only while the board has fewer than `most` items), 10 deletes, 30 toggles,
/// 25 renames and 18 moves, each of a random item, and 2 title changes. An added item's text is `name`; a
/// rename's text is `name` followed by " renamed", so added texts are the ones without a space.
public func randomCommand(
    items: [BoardItem], fewest: Int, most: Int, name: String, using random: inout some RandomNumberGenerator
) -> BoardCommand {
    let roll = Int.random(in: 0..<100, using: &random)
    guard items.count >= fewest, roll >= 15 || items.count >= most, let item = items.randomElement(using: &random) else {
        return .add(text: name)
    }
    switch roll {
    case ..<25: return .delete(id: item.id)
    case ..<55: return .toggle(id: item.id)
    case ..<80: return .rename(id: item.id, text: "\(name) renamed")
    case ..<98: return .move(id: item.id, to: Int.random(in: 0..<items.count, using: &random))
    default: return .setTitle("Title \(name)")
    }
}

/// The CPU time process `pid` has used so far, in user mode and in the kernel, from `/proc/PID/stat`
/// (Linux; in clock ticks, 10 ms on most systems), or `nil` when it cannot be read.
public func processCPU(pid: Int32) -> (user: Duration, system: Duration)? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // After "pid (name)": state is field 3, utime field 14 and stime field 15 (proc(5)).
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let ticks = sysconf(Int32(_SC_CLK_TCK))
    guard fields.count > 12, ticks > 0, let user = Int64(fields[11]), let system = Int64(fields[12]) else { return nil }
    return (.nanoseconds(user * 1_000_000_000 / Int64(ticks)), .nanoseconds(system * 1_000_000_000 / Int64(ticks)))
}
