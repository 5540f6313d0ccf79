import Foundation
import Stillwater
import StillwaterLive

#if canImport(Glibc)
import Glibc
#endif

// `benchmarks --only W15`: many rooms, few of them open (the workloads file's W15). One process whose data
// holds `rooms` rooms, each a FileJournal in its own folder (W14's state of 200 rows; 1 000 records, one
// row's count each, and the snapshots a hub with the default `snapshotEvery` leaves: at 0 and at 1 000).
// `LiveRooms` opens them on demand. Measured:
// - the first join of 100 different cold rooms, one after another: from `LiveRooms.connect(to:)` until the
//   client took its welcome and snapshot (the room's journal opened and loaded, its hub made, the client
//   admitted), p50 and p99;
// - with those 100 rooms open, one client each (its write loop waiting in `nextBatch()`), nothing sent:
//   the process's CPU over `idle` seconds (user + system, `getrusage`), its context switches, its RSS
//   (`/proc/self/statm`) and threads;
// - the first join of rooms whose journal holds 100 000 records with a snapshot every 1 000.
// The rooms are generated once into `$TMPDIR/stillwater-w15` and reused (a file `complete` marks a
// finished generation); the time generation took is printed. Not part of the speed gate: wall and CPU time.

/// W15's parameters (`--rooms`, `--idle-seconds`, `--big-rooms`).
struct ManyRoomsOptions {
    var rooms = 10_000
    var open = 100
    var records = 1_000
    var idleSeconds = 60
    var bigRooms = 20
    var bigRecords = 100_000
    var rows = 200
}

typealias RoomLog = FileJournal<LiveLogState<FanoutState>, LiveEntry<SetRowCount>>

func runManyRooms(_ options: ManyRoomsOptions) async throws {
    let parent = (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/stillwater-w15"
    let small = "\(parent)/rooms-\(options.records)r-\(options.rows)rows-\(options.rooms)"
    let big = "\(parent)/rooms-\(options.bigRecords)r-\(options.rows)rows-\(options.bigRooms)"
    try await generate(rooms: options.rooms, records: options.records, rows: options.rows, in: small)
    try await generate(rooms: options.bigRooms, records: options.bigRecords, rows: options.rows, in: big)
    print("W15 many rooms: \(options.rooms) rooms of \(options.records) records in \(small)")
    print("")

    // The first joins of `open` cold rooms, which then stay open with their client.
    let rooms = LiveRooms<FanoutService> { room in
        guard let index = Int(room), index >= 0, index < options.rooms else { throw LiveHubError("no room \(room)") }
        let log = try RoomLog(directory: roomPath(small, index), flush: .fsync)
        return try await LiveHub.open(FanoutService(), log: log, initial: FanoutState(rows: options.rows))
    }
    let before = Usage.now()
    var joins: [Double] = []
    var clients: [(LiveConnection<FanoutService>, Task<Void, Never>)] = []
    // Rooms spread over the whole set, so no two are neighbours on the disk.
    let step = options.rooms / options.open
    for n in 0..<options.open {
        let (time, client) = try await firstJoin(rooms, room: String(n * step))
        joins.append(time)
        clients.append(client)
    }
    let opened = Usage.now()
    print("first join of a cold room (\(options.records) records, snapshots at 0 and \(options.records)), \(options.open) rooms one after another:")
    print("  p50 \(ms(percentile(joins, 0.5))) ms, p99 \(ms(percentile(joins, 0.99))) ms, max \(ms(joins.max()!)) ms, "
          + "CPU \(ms((opened.cpu - before.cpu) / Double(options.open))) ms per join")
    print("")

    // Idle: nothing sent.
    try await Task.sleep(for: .seconds(2))
    let start = Usage.now()
    try await Task.sleep(for: .seconds(options.idleSeconds))
    let end = Usage.now()
    let wall = end.wall - start.wall
    print("idle, \(rooms.openRooms.count) rooms open with one client each, \(options.idleSeconds) s:")
    print("  CPU \(ms(end.user - start.user)) ms user + \(ms(end.system - start.system)) ms system over \(String(format: "%.1f", wall)) s "
          + "= \(String(format: "%.3f", 100 * (end.cpu - start.cpu) / wall))% of a core")
    print("  context switches: \(end.voluntary - start.voluntary) voluntary, \(end.involuntary - start.involuntary) involuntary")
    print("  RSS \(String(format: "%.1f", Double(end.rss) / 1_048_576)) MiB, \(end.threads) threads")
    print("")

    // The first joins of rooms with long journals.
    let bigRooms = LiveRooms<FanoutService> { room in
        guard let index = Int(room), index >= 0, index < options.bigRooms else { throw LiveHubError("no room \(room)") }
        let log = try RoomLog(directory: roomPath(big, index), flush: .fsync)
        return try await LiveHub.open(FanoutService(), log: log, initial: FanoutState(rows: options.rows))
    }
    var bigJoins: [Double] = []
    for n in 0..<options.bigRooms {
        let (time, client) = try await firstJoin(bigRooms, room: String(n))
        bigJoins.append(time)
        client.0.transportClosed()
        await client.1.value
    }
    print("first join of a cold room (\(options.bigRecords) records, a snapshot every \(options.records)), \(options.bigRooms) rooms one after another:")
    print("  p50 \(ms(percentile(bigJoins, 0.5))) ms, p99 \(ms(percentile(bigJoins, 0.99))) ms, max \(ms(bigJoins.max()!)) ms")

    for (connection, writer) in clients {
        connection.transportClosed()
        await writer.value
    }
    await rooms.close()
    await bigRooms.close()
}

/// Connects a client to `room`, sends its hello and waits for its welcome and snapshot; returns the
/// seconds that took and the client, whose write loop goes on draining.
private func firstJoin(_ rooms: LiveRooms<FanoutService>, room: String) async throws
    -> (Double, (LiveConnection<FanoutService>, Task<Void, Never>)) {
    let clock = ContinuousClock()
    let start = clock.now
    let connection = try await rooms.connect(to: room)
    connection.receive(#"{"type":"hello","protocol":1}"#)
    var frames = 0
    while frames < 2, let write = await connection.nextBatch() {
        if case .frames(let taken) = write { frames += taken.count }
    }
    let elapsed = clock.now - start
    precondition(frames >= 2, "W15: room \(room) closed the connection before its snapshot")
    // An adapter's write loop: write what `nextBatch()` returns, then ask again, until nil.
    let writer = Task { while await connection.nextBatch() != nil {} }
    return (seconds(elapsed), (connection, writer))
}

/// Writes `rooms` journals into `directory` unless a finished generation is there: each the snapshot
/// at 0, then `records` records (one row's count each) with a snapshot after every 1 000, as a hub with
/// the default options leaves them.
private func generate(rooms: Int, records: Int, rows: Int, in directory: String) async throws {
    let marker = directory + "/complete"
    if FileManager.default.fileExists(atPath: marker) { return }
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    print("W15: generating \(rooms) rooms of \(records) records in \(directory) (once; reused by later runs)")
    let clock = ContinuousClock()
    let start = clock.now
    let usage = Usage.now()
    // The writes wait on flushes, so more rooms than cores are written at once.
    let width = 16
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<rooms {
            if index >= width { try await group.next() }
            group.addTask { try await writeRoom(roomPath(directory, index), records: records, rows: rows) }
        }
        try await group.waitForAll()
    }
    let elapsed = seconds(clock.now - start)
    let cpu = Usage.now().cpu - usage.cpu
    try "\(rooms) rooms, \(records) records, \(rows) rows, generated in \(elapsed) s\n".write(toFile: marker, atomically: true, encoding: .utf8)
    print("W15: generated \(rooms) rooms in \(String(format: "%.1f", elapsed)) s (\(String(format: "%.1f", cpu)) s of CPU)")
}

private func writeRoom(_ path: String, records: Int, rows: Int) async throws {
    let log = try RoomLog(directory: path, flush: .fsync)
    _ = try await log.open()
    var state = LiveLogState(state: FanoutState(rows: rows))
    try await log.writeSnapshot(state, version: 0)
    var version = 0
    while version < records {
        let count = min(1_000, records - version)
        let entries = (version..<version + count).map { n in
            LiveEntry(action: SetRowCount(row: n % rows, count: n / rows + 1))
        }
        _ = try await log.append(entries)
        for entry in entries { entry.reduce(&state) }
        version += count
        state.version = version
        if version % 1_000 == 0 { try await log.writeSnapshot(state, version: version) }
    }
}

private func roomPath(_ directory: String, _ index: Int) -> String {
    directory + "/room-" + String(format: "%05d", index)
}

/// The process's CPU, context switches, RSS and threads, and the wall clock, now.
private struct Usage {
    var user: Double
    var system: Double
    var voluntary: Int
    var involuntary: Int
    var rss: Int
    var threads: Int
    var wall: Double
    var cpu: Double { user + system }

    static func now() -> Usage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let threads = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
            .flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Usage(
            user: Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
            system: Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6,
            voluntary: usage.ru_nvcsw, involuntary: usage.ru_nivcsw,
            rss: pages * Int(sysconf(Int32(_SC_PAGESIZE))), threads: threads,
            wall: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

private func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1_000) }

/// The `fraction` percentile of `values` (nearest rank).
private func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
