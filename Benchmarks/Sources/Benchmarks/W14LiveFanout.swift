import Stillwater
import StillwaterLive
import Synchronization

// MARK: - The service

/// One row of W14's list: an id, a text and a count that the commands change.
struct FanoutRow: Codable, Equatable, Sendable, Diffable {
    var id: Int
    var text: String
    var count: Int
    var diffIdentifier: Int { id }
}

/// W14's state: a title and the rows.
struct FanoutState: Codable, Sendable {
    var title = "W14 live fan-out"
    var rows: [FanoutRow]

    init(rows: Int) {
        self.rows = (0..<rows).map { FanoutRow(id: $0, text: "row \($0)", count: 0) }
    }
}

/// W14's view: the whole state, the rows as a list (sent as a `ListPatch`), the title as a value.
struct FanoutView: LiveView {
    var title: String
    var rows: [FanoutRow]
    static let liveFields: [LiveField<FanoutView>] = [.value("title", \.title), .list("rows", \.rows)]
}

/// W14's command and its action: set one row's count.
struct SetRowCount: Action, Codable, Sendable {
    var row: Int
    var count: Int
    func reduce(_ state: inout FanoutState) { state.rows[row].count = count }
}

/// W14's service: every command is accepted as it is; every client is admitted.
struct FanoutService: LiveService {
    func view(of state: FanoutState) -> FanoutView { FanoutView(title: state.title, rows: state.rows) }
    func decide(_ command: SetRowCount, state: FanoutState, identity: String) -> LiveDecision<SetRowCount> { .accept(command) }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("reader") }
}

/// W14's service with audiences (the variants `W14 a10` and `W14 a1000`): a client's token is its
/// audience's number, and each audience is shown the title with its number in it, so no two audiences
/// share a view or a frame; the rows are the same for all.
struct AudienceFanoutService: LiveService {
    func view(of state: FanoutState, for audience: Int) -> FanoutView {
        FanoutView(title: "\(state.title) for audience \(audience)", rows: state.rows)
    }
    func audience(of identity: Int) -> Int { identity }
    func decide(_ command: SetRowCount, state: FanoutState, identity: Int) -> LiveDecision<SetRowCount> { .accept(command) }
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<Int> { .accepted(Int(handshake.token ?? "") ?? 0) }
}

/// What W14 needs of its service: W14's state and command, and who the driver submits as.
protocol FanoutServing: LiveService where State == FanoutState, Command == SetRowCount, LiveAction == SetRowCount {
    init()
    /// The identity the driver's commands are submitted as.
    static var driver: Identity { get }
}

extension FanoutService: FanoutServing {
    static var driver: String { "driver" }
}

extension AudienceFanoutService: FanoutServing {
    static var driver: Int { 0 }
}

// MARK: - The workload

/// W14's shape: what stays the same at every scale (`--quick` divides only the commands).
struct FanoutShape {
    var connections = 1_000
    var rows = 200
    /// Commands at the full size (`--quick` divides them by 50).
    var commands = 10_000
    /// Commands applied per tick.
    var batch = 10
    /// How many audiences the connections are spread over, each with a view of its own: connection `i`
    /// joins audience `i % audiences`. 1 is W14 itself (``FanoutService``, one view for all); more are
    /// the variants `W14 a10` and `W14 a1000` (``AudienceFanoutService``).
    var audiences = 1
    /// Whether the connections are written as the endpoint writes them: each batch handed over as it comes
    /// (`LiveConnection.writeWhenReady`) and what came meanwhile taken with `takeBatch()`, on the thread
    /// that queued it, with no task per connection (`W14 push`); else each has a write loop awaiting
    /// `nextBatch()`.
    var pushed = false
}

/// W14 live fan-out: one `LiveHub` whose view holds a 200-row list and a title, 1 000 connections
/// admitted over the live protocol (no sockets), each with a write loop awaiting `nextBatch()` as an
/// adapter's does; `count` commands, each setting one row's count, submitted 10 at a time through
/// `LiveHub.submit`, and after each 10 are applied a `tick()`, which sends every connection one patch.
/// Measured per delivered frame: the timed part is the whole loop (submitting, waiting for the hub's
/// writer to apply, the tick, every write loop taking its frame).
///
/// The write loops and the loop that submits and ticks run on the measuring thread
/// (``CallerThreadExecutor``), so the speed gate counts them: the tick (the patch's diff and encoding,
/// once per tick, and handing it to each connection) and the write loops' takes. The hub's writer
/// (deciding, the journal's append, reducing, the view) runs on the global executor, in a task of the
/// library's own: its time and allocations are in the figures, its instructions are not in the gate's count.
///
/// Checksum: the frames delivered, plus the version of the last frame connection 0 took (which must be
/// `count`: the run stops otherwise). The note gives the bytes encoded per version (what the first
/// connection took, over the versions: one patch per tick covers `batch` of them) and the bytes the write
/// loops took in all.
func liveFanoutWorkload(_ scale: Scale) -> Workload {
    liveFanoutWorkload(scale, shape: FanoutShape())
}

func liveFanoutWorkload(_ scale: Scale, shape: FanoutShape) -> Workload {
    precondition(shape.audiences >= 1 && shape.audiences <= shape.connections, "W14: 1 to \(shape.connections) audiences")
    return shape.audiences == 1
        ? liveFanoutWorkload(scale, shape: shape, service: FanoutService.self)
        : liveFanoutWorkload(scale, shape: shape, service: AudienceFanoutService.self)
}

/// `W14 push`: W14 with every connection written as the Hummingbird endpoint writes it (`writeWhenReady`
/// and `takeBatch()`, no task per connection): the tick hands each connection's patch to its adapter on
/// the same thread, where an endpoint would hop to the socket's event loop.
func livePushFanoutWorkload(_ scale: Scale) -> Workload {
    var shape = FanoutShape()
    shape.pushed = true
    return liveFanoutWorkload(scale, shape: shape)
}

/// The variants of W14 with `audiences` audiences (`W14 a10`, `W14 a1000`): the connections spread evenly
/// over them, each audience's view its own (its title names it). With 1 000 audiences a frame costs
/// about 20 times W14's in instructions (each audience's patch is diffed and encoded for its one
/// client), so that variant sends a tenth of the commands (1 000: 100 ticks, 100 000 frames; two ticks at
/// the quick size), to keep the speed gate's time within reason.
func liveFanoutWorkload(_ scale: Scale, audiences: Int) -> Workload {
    var shape = FanoutShape()
    shape.audiences = audiences
    if audiences >= 1_000 { shape.commands = 1_000 }
    return liveFanoutWorkload(scale, shape: shape)
}

private func liveFanoutWorkload<Service: FanoutServing>(_ scale: Scale, shape: FanoutShape, service: Service.Type) -> Workload {
    let ticks = max(1, scale.count(shape.commands) / shape.batch)
    let suffix = (shape.audiences == 1 ? "" : " a\(shape.audiences)") + (shape.pushed ? " push" : "")
    return Workload(
        name: "W14" + suffix,
        title: "live fan-out ×\(shape.connections)" + (shape.audiences == 1 ? "" : ", \(shape.audiences) audiences")
            + (shape.pushed ? ", pushed" : ""),
        operation: "frame", operations: ticks * shape.connections, countsAllocations: true,
        contenders: [
            Contender(.stillwater, name: "Stillwater (LiveHub + LiveConnection.\(shape.pushed ? "writeWhenReady" : "nextBatch"))") { stopwatch in
                let executor = CallerThreadExecutor(name: "W14" + suffix)
                let fanout = executor.run { await Fanout<Service>.start(shape, on: executor) }
                stopwatch.measure {
                    executor.run { await fanout.deliver(ticks: ticks) }
                }
                let tally = fanout.tally
                let frames = tally.frames, version = tally.lastVersion
                executor.run { await fanout.finish() }
                precondition(frames == ticks * shape.connections && version == ticks * shape.batch, """
                    W14\(suffix): \(frames) frames delivered (not \(ticks * shape.connections)); connection 0 ended on \
                    version \(version), not \(ticks * shape.batch)
                    """)
                stopwatch.note = "encoded \(number(Double(tally.encodedBytes) / Double(version))) bytes per version "
                    + "(\(number(Double(tally.encodedBytes) / Double(ticks))) per tick's patches); written \(number(Double(tally.bytes))) "
                    + "bytes in all, \(number(Double(tally.bytes) / Double(tally.encodedBytes)))x the encoded"
                return frames &+ version
            },
        ]
    )
}

/// A hub with its connections admitted, each with its write loop.
private final class Fanout<Service: FanoutServing>: Sendable {
    let shape: FanoutShape
    let hub: LiveHub<Service>
    let tally: FanoutTally
    let writers: [Task<Void, Never>]
    /// The pushed connections (the hub holds them weakly; a write loop holds its own).
    let connections: [LiveConnection<Service>]

    private init(shape: FanoutShape, hub: LiveHub<Service>, tally: FanoutTally, writers: [Task<Void, Never>],
                 connections: [LiveConnection<Service>]) {
        self.shape = shape
        self.hub = hub
        self.tally = tally
        self.writers = writers
        self.connections = connections
    }

    /// Opens the hub, connects and admits every connection, and waits until each write loop took its
    /// welcome and snapshot. Runs in a task of `executor`; the write loops are tasks that prefer it too.
    static func start(_ shape: FanoutShape, on executor: CallerThreadExecutor) async -> Fanout {
        let log = MemoryJournal<LiveLogState<FanoutState>, LiveEntry<SetRowCount>>()
        let hub = try! await LiveHub.open(Service(), log: log, initial: FanoutState(rows: shape.rows))
        let connections = (0..<shape.connections).map { _ in hub.connect() }
        let tally = FanoutTally()
        // An adapter's write loop: write what `nextBatch()` returns, then ask again, until nil. The first
        // connection of each audience (`index < audiences`) counts what was encoded for it. Pushed: the
        // adapter, told, takes every batch on the spot.
        if shape.pushed {
            for (index, connection) in connections.enumerated() {
                connection.writeWhenReady { [weak connection] first in
                    var write: LiveWrite? = first
                    while let batch = write {
                        if case .frames(let frames) = batch {
                            tally.took(frames, first: index == 0, representative: index < shape.audiences)
                        }
                        write = connection?.takeBatch()
                    }
                }
            }
        }
        let writers = shape.pushed ? [] : connections.enumerated().map { index, connection in
            Task(executorPreference: executor) {
                while let write = await connection.nextBatch() {
                    guard case .frames(let frames) = write else { continue }
                    tally.took(frames, first: index == 0, representative: index < shape.audiences)
                }
            }
        }
        await tally.waitForFrames(2 * shape.connections) {
            for (index, connection) in connections.enumerated() {
                // W14 itself sends the hello it always sent; the variants name the audience in the token.
                connection.receive(shape.audiences == 1
                    ? #"{"type":"hello","protocol":1}"#
                    : #"{"type":"hello","protocol":1,"token":"\#(index % shape.audiences)"}"#)
            }
        }
        tally.reset()
        return Fanout(shape: shape, hub: hub, tally: tally, writers: writers, connections: shape.pushed ? connections : [])
    }

    /// The timed part: `ticks` times, submits `batch` commands and waits until they are applied, ticks,
    /// and waits until every write loop took its patch.
    func deliver(ticks: Int) async {
        for tick in 1...ticks {
            await withCheckedContinuation { (applied: CheckedContinuation<Void, Never>) in
                let waiting = Countdown(shape.batch)
                let first = (tick - 1) * shape.batch
                for command in first..<first + shape.batch {
                    let set = SetRowCount(row: command % shape.rows, count: command / shape.rows + 1)
                    hub.submit(set, as: Service.driver) { _ in
                        if waiting.tick() { applied.resume() }
                    }
                }
            }
            await tally.waitForFrames(tick * shape.connections) { hub.tick() }
        }
    }

    /// Closes the hub and ends every write loop.
    func finish() async {
        await hub.close()
        for writer in writers { await writer.value }
    }
}

/// Counts replies down; true for the one that reaches zero.
private final class Countdown: Sendable {
    private let left: Atomic<Int>
    init(_ count: Int) { left = Atomic(count) }
    func tick() -> Bool { left.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 }
}

/// What the write loops took: frames and bytes, the bytes of each audience's first connection, and the
/// last frame of the first connection; and the driver waiting for a number of frames.
///
/// Unchecked: the write loops and the driver are tasks of one ``CallerThreadExecutor``, so every access
/// is on the measuring thread, one job after another (no lock, so the gate counts none).
private final class FanoutTally: @unchecked Sendable {
    private(set) var frames = 0
    private(set) var bytes = 0
    /// The bytes the first connection of each audience took: every frame the others took is one of
    /// theirs (each audience's patch is encoded once and shared), so this is what was encoded.
    private(set) var encodedBytes = 0
    private var lastFrame = ""
    private var target = Int.max
    private var waiter: CheckedContinuation<Void, Never>?

    /// A write loop took `taken`: from the first connection (`first`), from the first of its audience
    /// (`representative`), or from another.
    func took(_ taken: [LiveFrame], first: Bool, representative: Bool) {
        frames += taken.count
        var size = 0
        for frame in taken { size += frame.count }
        bytes += size
        if representative { encodedBytes += size }
        if first, let last = taken.last { lastFrame = last.text }
        if frames >= target { release() }
    }

    /// Runs `action`, then waits until the write loops took `count` frames since the last reset.
    func waitForFrames(_ count: Int, after action: () -> Void) async {
        await withCheckedContinuation { continuation in
            target = count
            waiter = continuation
            action()
            if frames >= target { release() }
        }
    }

    func reset() {
        frames = 0
        bytes = 0
        encodedBytes = 0
    }

    /// The version of the first connection's last frame (a patch's or a snapshot's `version`).
    var lastVersion: Int {
        let member = lastFrame.split(separator: ",").first { $0.hasPrefix(#""version":"#) }
        return member.flatMap { Int($0.dropFirst(#""version":"#.count)) } ?? -1
    }

    private func release() {
        guard let waiter else { return }
        self.waiter = nil
        target = .max
        waiter.resume()
    }
}
