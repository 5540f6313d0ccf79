#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where and when a run happened, for the captions of the table and the chart.
struct Machine {
    var date: String
    var architecture: String
    var cpu: String
    var cores: Int

    var summary: String { "\(date), \(architecture), \(cpu), \(cores) cores" }

    static func current() -> Machine {
        var names = utsname()
        uname(&names)
        let architecture = withUnsafeBytes(of: &names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let cpu = readFile("/proc/cpuinfo")?
            .split(separator: "\n")
            .first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingPrefix(" ") }
        return Machine(
            date: utcDate(), architecture: architecture, cpu: cpu.map(String.init) ?? "unknown CPU",
            cores: sysconf(Int32(_SC_NPROCESSORS_ONLN))
        )
    }
}

private func utcDate() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    var buffer = [CChar](repeating: 0, count: 32)
    let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M UTC", &parts)
    return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count == 0 { break }
        bytes += chunk.prefix(count)
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Writes `text` to `path`, or stops the run with a message naming the path.
func writeFile(_ path: String, _ text: String) {
    guard let file = fopen(path, "w"), fputs(text, file) >= 0, fclose(file) == 0 else {
        printError("cannot write \(path)")
        exit(2)
    }
}

func printError(_ message: String) {
    let line = "benchmarks: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}
