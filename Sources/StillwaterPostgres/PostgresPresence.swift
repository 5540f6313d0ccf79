#if Postgres
import Foundation
import StillwaterLive
import Synchronization

/// Shows the clients of every server of a cluster to the clients of each: every ``interval`` it stores
/// who is connected to this server, room by room (`LiveHub.localPresence`), in the journal's database
/// until ``ttl`` from then by the database's clock, and reads what the other servers stored
/// (`LiveHub.mergePresence(_:from:expires:)`).
///
/// ```swift
/// let presence = PostgresPresenceExchange(journal: journal, node: "node-a")
/// presence.share(hub, as: "alpha")        // the hub of the log "alpha"
/// let exchanging = Task { await presence.run() }
/// // At shutdown: cancel the task; run() then removes this server's rows, so its clients leave at once.
/// ```
///
/// - **A server that stops** (its `run()` cancelled) removes its rows: its clients leave everywhere at the
///   others' next round.
/// - **A server that dies** leaves its rows behind; they count until ``ttl`` after its last round, so its
///   clients leave everywhere within ``ttl`` + ``interval`` (20 s with the defaults).
/// - **The database cannot be reached**: nothing is stored or read; what the other servers said expires on
///   each server after ``ttl`` by its own clock, and the exchange tries again every ``interval``.
///
/// Cost: per round and shared room, one upsert and one read of the room's rows (one per server).
public final class PostgresPresenceExchange<State: Codable & Sendable, Entry: Codable & Sendable>: Sendable {
    /// This server's name in the exchange: unique among the cluster's servers.
    public let node: String
    /// How often this server tells and reads (5 s by default).
    public let interval: Duration
    /// How long what a server told holds (15 s by default): longer than ``interval``, so that one late
    /// round does not make anyone leave.
    public let ttl: Duration

    private struct Room: Sendable {
        var local: @Sendable () -> [String: String]
        var merge: @Sendable ([String: [String: String]], Date) -> Void
        var forget: @Sendable (String) -> Void
        /// Tells the hub's observer that a round failed for this room.
        var failed: @Sendable (any Error) -> Void
        /// The servers whose word was merged in the last round.
        var merged: Set<String> = []
    }

    private let journal: PostgresJournal<State, Entry>
    private let rooms = Mutex<[String: Room]>([:])

    /// An exchange through `journal`'s database (its table `PREFIX_presence`, made by
    /// `PostgresJournal.prepare()`).
    ///
    /// - Parameters:
    ///   - journal: The journal whose database the servers share.
    ///   - node: This server's name, unique in the cluster (a host name and port, say).
    ///   - interval: How often to tell and read.
    ///   - ttl: How long what a server told holds.
    /// - Precondition: `ttl` is longer than `interval`, and `interval` is positive.
    public init(journal: PostgresJournal<State, Entry>, node: String, interval: Duration = .seconds(5), ttl: Duration = .seconds(15)) {
        precondition(interval > .zero, "PostgresPresenceExchange(interval:) must be positive (got \(interval))")
        precondition(ttl > interval, "PostgresPresenceExchange(ttl:) must be longer than interval (got \(ttl), interval \(interval))")
        self.journal = journal
        self.node = node
        self.interval = interval
        self.ttl = ttl
    }

    /// Shares the presence of `hub`, the hub of the log named `log`, from the next round on.
    public func share<Service: LiveService>(_ hub: LiveHub<Service>, as log: String) {
        let ttl = ttl, node = node
        let room = Room(
            local: { [weak hub] in hub?.localPresence ?? [:] },
            merge: { [weak hub] said, now in
                guard let hub else { return }
                for (node, entries) in said { hub.mergePresence(entries, from: node, expires: now.addingTimeInterval(Self.seconds(ttl))) }
                hub.expirePresence(now: now)
            },
            forget: { [weak hub] node in hub?.forgetPresence(from: node) },
            failed: { [weak hub] error in
                hub?.observer?.record(.presenceExchangeFailed(room: log, node: node, error: String(describing: error)))
            })
        rooms.withLock { $0[log] = room }
    }

    /// Stops sharing `log`'s presence, and removes this server's row for it.
    public func stopSharing(_ log: String) async {
        guard let room = rooms.withLock({ $0.removeValue(forKey: log) }) else { return }
        await remove(log, room)
    }

    /// Removes this server's row for `log`; a failure is told to the room's hub's observer (the row then
    /// expires after ``ttl`` on its own).
    private func remove(_ log: String, _ room: Room) async {
        do {
            try await journal.publishPresence([:], of: log, node: node, ttl: ttl)
        } catch {
            room.failed(error)
        }
    }

    /// Exchanges every ``interval`` until the calling task is cancelled, then removes this server's rows.
    public func run() async {
        while !Task.isCancelled {
            await exchange()
            try? await Task.sleep(for: interval)
        }
        for (log, room) in rooms.withLock({ $0 }) { await remove(log, room) }
    }

    /// One round: tells what this server has and shows what the others have, for every shared room. A
    /// room whose database work fails is left as it was (what the others said expires after ``ttl``).
    public func exchange() async {
        let now = Date()
        for (log, room) in rooms.withLock({ $0 }) {
            do {
                try await journal.publishPresence(room.local(), of: log, node: node, ttl: ttl)
                let said = try await journal.presence(of: log, except: node)
                room.merge(said, now)
                let gone = rooms.withLock { rooms -> Set<String> in
                    guard var current = rooms[log] else { return [] }
                    defer {
                        current.merged = Set(said.keys)
                        rooms[log] = current
                    }
                    return current.merged.subtracting(said.keys)
                }
                // A server whose row is gone (it stopped, or its word expired by the database's clock).
                for other in gone { room.forget(other) }
            } catch {
                room.failed(error)
                room.merge([:], now)
            }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
#endif
