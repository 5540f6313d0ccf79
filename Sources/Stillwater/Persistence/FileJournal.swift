import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``ActionJournal`` in a directory of plain files: the embedded default, with no database and no
/// dependency.
///
/// Records are appended to a segment file and made durable by ``sync()`` (written, then flushed to the
/// disk with `fsync`); each sync ends its batch of records with a commit mark. Snapshots are written to
/// files of their own, atomically. When the program stopped in the middle of a write, ``load()`` cuts
/// the bytes after the last commit mark off the end (they were never acknowledged), keeps them in a file
/// beside it, and says so in ``JournalContents/warnings``. Any other damage, a changed byte before the
/// last commit mark included, is ``JournalError/Kind/corrupt``: reported with the file and the offset,
/// nothing changed, never repaired by dropping records. No file content can make the journal trap.
///
/// ```swift
/// import Foundation
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
/// defer { try? FileManager.default.removeItem(atPath: directory) }
/// do {
///     let journal = try FileJournal<Int, Add>(directory: directory)
///     _ = try journal.load()
///     try journal.append(Add(amount: 2), version: 1)
///     try journal.append(Add(amount: 3), version: 2)
///     try journal.sync()
/// }   // the journal is freed here, which releases the directory
/// let reopened = try FileJournal<Int, Add>(directory: directory)
/// let (store, contents) = try Store.restoring(from: reopened, initialState: 0)
/// print(store.state.value, contents.version)
/// // Prints "5 2"
/// ```
///
/// ## One journal per directory
///
/// `init(directory:)` takes an exclusive `flock` on the file `lock` in the directory and holds it until
/// the journal is freed. A second journal on the same directory, in another process or in this one, gets
/// ``JournalError/Kind/locked`` after trying for 0.2 seconds (never blocking): long enough for a child
/// process this program starts at that moment, which holds a copy of the lock's descriptor until it runs
/// its program, to drop it. Child processes never keep the lock.
///
/// ## Order of calls
///
/// `init` reads nothing. Call ``load()`` once first: it reads the files, repairs a torn end, and tells
/// the version to append after. ``append(_:version:)``, ``sync()`` and ``writeSnapshot(_:version:)``
/// before it stop the program with a message saying so. Calling `load()` again re-reads the files;
/// records appended since the last sync are dropped.
///
/// ## When a write fails
///
/// If ``sync()`` cannot write or flush (a full disk, an I/O error), it cuts the segment back to its
/// length after the last successful sync, so nothing half-written stays, and throws. The records it was
/// to write are then not durable, and they are dropped from memory too: the journal continues from the
/// last durable version, so the next append is that version plus one. Whoever appended them must treat
/// them as not done (``Middleware/journaling(to:startingAfter:snapshotEvery:onError:)`` does not reduce
/// such an action). If even the cut fails, every later write throws until ``load()`` is called again,
/// which repairs the end of the file.
///
/// ## Files
///
/// The directory holds:
/// - `journal-<version>.log`: a segment, holding the records from `<version>` on, until the next
///   segment's first version. `<version>` is written in 20 decimal digits, zero-padded, so the names
///   sort in version order.
/// - `snapshot-<version>.json`: the state after `<version>` (20 digits, as above).
/// - `lock`: empty; the `flock` above.
/// - Left by repairs, never read again: `journal-<version>.log.torn-<unix seconds>` (bytes cut off the
///   end of a segment) and `snapshot-<version>.json.damaged-<unix seconds>` (a snapshot that failed its
///   check). A `.tmp` file is a write that never completed.
///
/// A segment starts with the 8 bytes `SWJRNL02`. Then come batches, one per sync: the batch's records,
/// each following the one before with no padding, then the batch's commit mark. A record is:
///
/// | Bytes | What |
/// |---|---|
/// | 4 | payload length `N`, unsigned, little-endian; at most 16 MiB |
/// | 4 | CRC-32 (IEEE 802.3, as in zip) of the next `8 + N` bytes, little-endian |
/// | 8 | the version, unsigned, little-endian |
/// | `N` | the action as JSON (`JSONEncoder`, sorted keys) |
///
/// A commit mark is 16 bytes:
///
/// | Bytes | What |
/// |---|---|
/// | 4 | `FF FF FF FF`, where a record has its length (which is never this large) |
/// | 4 | the chained CRC-32, little-endian: of the previous mark's chained CRC-32 (for the segment's first mark, the CRC-32 of `SWJRNL02` and the version in the segment's name, 8 bytes little-endian), every byte of the batch's records, and the batch's last version |
/// | 8 | the batch's last version, unsigned, little-endian |
///
/// Within a segment, versions go up by one from the version in its name. Segments that start with
/// `SWJRNL01` were written by earlier versions of this package: records only, no commit marks. They are
/// still read, with the rule those versions had (a bad record at the end of the last segment is a torn
/// write); new records always go to a new `SWJRNL02` segment.
///
/// A snapshot file is one header line, then JSON. The header is 60 bytes: `SWSNAP01`, the version (20
/// digits), the JSON's length in bytes (20 digits) and the CRC-32 of the JSON (8 lower-case hex digits),
/// separated by single spaces and ended by a line feed. The JSON is `{"state":…,"version":…}` (sorted
/// keys). A snapshot is written to `<name>.tmp`, flushed, renamed over `<name>`, and the directory is
/// flushed, so a crash leaves the whole file or none.
///
/// ## Snapshots and what is kept
///
/// ``writeSnapshot(_:version:)`` first syncs, then starts a new segment (named for the next version to
/// append) when the current one holds records, then writes the snapshot. It keeps the newest two
/// snapshots and deletes older ones, and deletes the segments whose records are all covered by the older
/// of the two kept. So when the newest snapshot turns out damaged, ``load()`` falls back to the older one
/// and still finds every record after it. A file it cannot delete is tried again at the next snapshot.
///
/// ## What load reads and repairs
///
/// ``load()`` checks every file the journal keeps, every segment and every snapshot, not only what it
/// replays, so damage to a file kept for falling back is found when it happens. It takes the newest
/// snapshot whose header, length and checksum are right, then reads the records after it, in order.
/// Without a usable snapshot it starts from version 0. ``verify(directory:)`` makes the same checks and
/// reports what it finds without changing anything.
///
/// A snapshot that fails its check, the newest or an older one, is moved aside to
/// `.damaged-<unix seconds>` with a warning, and the load goes on without it: from the older snapshot
/// and the records after it, which the journal keeps for this (see above). When the records it covered
/// are not all there, that is a gap, ``JournalError/Kind/corrupt``, and nothing is moved: a damaged
/// snapshot never costs an acknowledged record. The next ``writeSnapshot(_:version:)`` restores two
/// good snapshots.
///
/// Then, for the records:
/// - A torn write: a crash can leave unsynced bytes only after the last commit mark of the last
///   segment: a prefix of the batch being written, parts of which may read as zeros. Those bytes (the
///   records of a sync that never returned, so never acknowledged) are copied to
///   `<segment>.torn-<unix seconds>`, the segment is cut back to the end of its last valid commit mark
///   and flushed, and a warning names the file, the offset and the number of bytes cut.
/// - Damage: anything else that fails its check is ``JournalError/Kind/corrupt``, one line with the
///   file and the offset: a record or commit mark that is cut short or fails its checksum in a segment
///   before the last; in the last segment, one followed by a valid commit mark, or in a last batch that
///   ends in its commit mark (tag and version written: the batch was written to its end, so its sync may
///   have returned and the records been acknowledged; the last record of the last batch is damage too,
///   not a torn write); a file named like a segment that starts with neither magic; a version out of
///   sequence, or a gap between the snapshot and the records. Nothing is changed before such an error
///   is thrown. On a file system that writes the pages of one append out of order, a crash during a
///   flush may leave a batch whose mark reached the disk before its records: that too is reported as
///   damage, not cut, since no rule can tell it from damage to an acknowledged batch.
/// - A record or snapshot that is intact but does not decode is ``JournalError/Kind/decoding``, naming
///   the file and the version.
///
/// - Note: Appends wait while a sync or snapshot is writing: the journal has one lock, held for the
///   write and the flush. Decoding in ``load()`` and encoding in ``append(_:version:)`` and
///   ``writeSnapshot(_:version:)`` run the types' `Codable` code; encoding runs outside that lock.
/// - Complexity: ``append(_:version:)`` encodes the action and copies it into memory; ``sync()`` costs
///   one `write` and one `fsync` for everything appended since the last one, so syncing after a batch of
///   appends costs one flush for the batch. ``load()`` reads each segment it needs whole.
public final class FileJournal<State: Codable & Sendable, JournaledAction: Action & Codable & Sendable>: ActionJournal
where JournaledAction.State == State {
    /// The directory the journal's files are in, as given to `init`.
    public let directory: String
    /// Holds the directory's `flock` for the journal's life.
    private let lockFile: JournalFile
    /// The directory and the file operations made on it.
    private let files: JournalDirectory
    private let storage = Lock(FileJournalState())

    /// Opens the journal in `directory`, creating the directory if it is missing, and locks it.
    ///
    /// Reads nothing yet: call ``load()`` next.
    ///
    /// - Throws: ``JournalError/Kind/locked`` when another journal (in any process) has the directory
    ///   open; ``JournalError/Kind/unwritable`` when the directory or its lock file cannot be created.
    public convenience init(directory: String) throws {
        try self.init(directory: directory, system: .posix)
    }

    /// Opens the journal in `directory` with every file operation made through `system` (a test's, to
    /// inject faults).
    init(directory: String, system: JournalSystem) throws {
        self.directory = directory
        guard !directory.isEmpty else {
            throw JournalError(.unwritable, path: directory, reason: "the directory's path is empty")
        }
        let files = JournalDirectory(directory: directory, system: system)
        self.files = files
        try files.create()
        let lockFile = try files.open(files.path(of: "lock"), O_RDWR | O_CREAT)
        guard try lockFile.tryLockExclusively() else {
            throw JournalError(
                .locked, path: lockFile.path,
                reason: "locked: another journal has this directory open (in this process or another); one journal may use a directory at a time")
        }
        self.lockFile = lockFile
    }

    /// Reads the newest usable snapshot and the records after it, repairing a torn end of the last
    /// segment (see "What load reads and repairs" above).
    ///
    /// When it throws, the journal is left unloaded: appending stops the program until a `load()`
    /// succeeds.
    ///
    /// - Throws: ``JournalError``: ``JournalError/Kind/corrupt`` for damage it does not repair (nothing is
    ///   changed then), ``JournalError/Kind/decoding`` for a record or snapshot of another shape,
    ///   ``JournalError/Kind/unreadable`` or ``JournalError/Kind/unwritable`` for the file system.
    /// - Complexity: Reads and checks every byte of the snapshot and of the segments after it, and
    ///   decodes each record after the snapshot.
    public func load() throws -> JournalContents<State, JournaledAction> {
        try storage.withLock { storage in
            // A failed write whose cut failed too left bytes that may even end in a whole commit mark:
            // they were never acknowledged, so they go before anything is read.
            if storage.broken != nil, let segment = storage.segment {
                try segment.file.truncate(to: segment.length)
                try segment.file.sync()
            }
            // A load that throws leaves the journal unloaded: nothing is written after an error it reported.
            storage = FileJournalState()
            let (contents, opened) = try FileJournalLoader<State, JournaledAction>(files: files).load()
            storage = opened
            return contents
        }
    }

    /// Appends `action` as the record of `version`, in memory; ``sync()`` writes it.
    ///
    /// - Parameters:
    ///   - action: Encoded now, as JSON with sorted keys.
    ///   - version: Exactly one more than the last appended version (or the version ``load()``
    ///     reported); anything else stops the program with a message naming it.
    /// - Throws: ``JournalError/Kind/encoding`` when the action cannot be encoded or encodes to more than
    ///   16 MiB (nothing is appended then); the error of an earlier failure that left the journal
    ///   unwritable (see "When a write fails").
    public func append(_ action: JournaledAction, version: Int) throws {
        let payload = try payload(of: action, what: "the action of version \(version)")
        try storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "FileJournal", "append(_:version:)")
            if let broken = storage.broken { throw broken }
            JournalRules.requireNext(version, after: storage.appendedVersion, "FileJournal")
            JournalFormat.appendRecord(version: version, payload: payload, to: &storage.pending)
            storage.appendedVersion = version
        }
    }

    /// Writes every appended record to the current segment and flushes it to the disk (`fsync`).
    ///
    /// Returns at once when nothing was appended since the last sync. When it throws, the records it was
    /// to write are dropped and the segment is cut back (see "When a write fails").
    ///
    /// - Throws: ``JournalError/Kind/unwritable``, with the system's error text.
    public func sync() throws {
        try storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "FileJournal", "sync()")
            try storage.flush()
        }
    }

    /// Syncs, then writes `state` as the snapshot at `version` and deletes what the newest two snapshots
    /// make unneeded (see "Snapshots and what is kept").
    ///
    /// The snapshot is durable when this returns.
    ///
    /// - Parameters:
    ///   - state: The state after the action with `version`; encoded now, as JSON with sorted keys.
    ///   - version: At most the last appended version; otherwise the program stops with a message naming
    ///     it.
    /// - Throws: ``JournalError``: ``JournalError/Kind/encoding`` when the state cannot be encoded,
    ///   ``JournalError/Kind/unwritable`` for the file system. After a throw the journal is still usable:
    ///   the older snapshots and every record are kept.
    /// - Complexity: Encodes the whole state and writes it with two flushes (file and directory).
    public func writeSnapshot(_ state: State, version: Int) throws {
        let json = try encode(SnapshotBody(version: version, state: state), what: "the state of version \(version)")
        try storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "FileJournal", "writeSnapshot(_:version:)")
            JournalRules.requireSnapshotVersion(version, appended: storage.appendedVersion, "FileJournal")
            try storage.flush()
            try storage.startSegmentIfUsed(in: files)
            let path = files.path(of: JournalFormat.snapshotName(version: version))
            try files.writeAtomically(JournalFormat.snapshotFile(version: version, json: json), to: path)
            storage.removeCovered(by: version, in: files)
        }
    }

    /// The record payload of `action`: its JSON, or a ``JournalError/Kind/encoding`` naming `what` when
    /// it cannot be encoded or is larger than a record may hold.
    private func payload(of action: JournaledAction, what: String) throws(JournalError) -> Data {
        let payload = try encode(action, what: what)
        guard payload.count <= JournalFormat.maxPayload else {
            throw JournalError(
                .encoding, path: directory,
                reason: "\(what) encodes to \(payload.count) bytes, more than the \(JournalFormat.maxPayload) a record may hold")
        }
        return payload
    }

    /// `value` as JSON with sorted keys, or a ``JournalError/Kind/encoding`` naming `what`.
    private func encode(_ value: some Encodable, what: String) throws(JournalError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return try encoder.encode(value)
        } catch {
            throw JournalError(.encoding, path: directory, reason: "cannot encode \(what): \(error)")
        }
    }
}

extension FileJournal: ActionLog {
    /// The type of entry the journal's records hold: its actions.
    public typealias Entry = JournaledAction

    /// Loads the journal (see ``load()``) and returns what it holds as a log's contents.
    ///
    /// - Throws: What ``load()`` throws.
    public func open() async throws -> ActionLogContents<State, JournaledAction> {
        ActionLogContents(try load())
    }

    /// Appends `entries` as the records of the next versions, writes them and flushes them to the disk
    /// in one `write` and one `fsync`, and returns their versions.
    ///
    /// The work is synchronous, on the calling task's thread; concurrent appends take turns, each with a
    /// flush of its own, and each gets a contiguous range of versions.
    ///
    /// - Parameter entries: At least one entry (an empty array stops the program); encoded now, as JSON
    ///   with sorted keys.
    /// - Returns: The versions the entries made, in order.
    /// - Throws: ``JournalError/Kind/encoding`` when an entry cannot be encoded (nothing is appended);
    ///   ``JournalError/Kind/unwritable`` when the write or the flush fails: the segment is cut back, none
    ///   of the entries is kept, and the next append continues from the last durable version (see "When
    ///   a write fails").
    public func append(_ entries: [JournaledAction]) async throws -> ClosedRange<Int> {
        ActionLogRules.requireEntries(entries.count, "FileJournal")
        let payloads = try entries.enumerated().map { index, entry throws(JournalError) in
            try payload(of: entry, what: "entry \(index) of the append")
        }
        return try storage.withLock { storage throws(JournalError) in
            JournalRules.requireLoaded(storage.loaded, "FileJournal", "append(_:)")
            if let broken = storage.broken { throw broken }
            let first = storage.appendedVersion + 1
            for payload in payloads {
                storage.appendedVersion += 1
                JournalFormat.appendRecord(version: storage.appendedVersion, payload: payload, to: &storage.pending)
            }
            let last = storage.appendedVersion
            try storage.flush()
            return first...last
        }
    }

    /// The durable records after `version`, at most `limit`, read back from the segments.
    ///
    /// Records covered by the older of the two kept snapshots may be deleted already (see "Snapshots
    /// and what is kept"); the first record returned is then later than `version + 1`.
    ///
    /// - Throws: ``JournalError``: ``JournalError/Kind/corrupt`` when a segment read is damaged,
    ///   ``JournalError/Kind/decoding`` or ``JournalError/Kind/unreadable``.
    /// - Complexity: Reads the segments that hold the records asked for, whole, while appends wait.
    public func records(after version: Int, limit: Int) async throws -> [ActionLogRecord<JournaledAction>] {
        ActionLogRules.requireLimit(limit, "FileJournal")
        return try storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "FileJournal", "records(after:limit:)")
            return try FileJournalLoader<State, JournaledAction>(files: files)
                .durableRecords(after: version, limit: limit, in: storage)
                .map { ActionLogRecord(version: $0.version, entry: $0.action) }
        }
    }

    /// The last durable version: the last synced record's, or the loaded snapshot's.
    public func head() async throws -> Int {
        storage.withLock { storage in
            JournalRules.requireLoaded(storage.loaded, "FileJournal", "head()")
            return storage.durableVersion
        }
    }
}

/// What a snapshot file's JSON holds.
struct SnapshotBody<State: Codable>: Codable {
    var version: Int
    var state: State
}

/// What a ``FileJournal`` knows between calls, under its lock.
struct FileJournalState {
    /// Whether `load()` ran: nothing may be appended before it.
    var loaded = false
    /// The last version appended (durable or not).
    var appendedVersion = 0
    /// The last version written and flushed.
    var durableVersion = 0
    /// The records appended since the last sync, encoded.
    var pending: [UInt8] = []
    /// The segment appended to; set by `load()`.
    var segment: Segment?
    /// The first versions of every segment file, ascending; the last is `segment`'s.
    var segments: [Int] = []
    /// The versions of the snapshot files kept, ascending.
    var snapshots: [Int] = []
    /// Set when a failed write could not be cut back: every write throws it until `load()`.
    var broken: JournalError?

    /// The segment appended to.
    struct Segment {
        var file: JournalFile
        /// The version in its name.
        var first: Int
        /// Its length after the last successful sync: where a failed write is cut back to.
        var length: Int
        /// The checksum of its last commit mark, which the next one chains from.
        var chain: UInt32
    }

    /// Writes and flushes `pending`; on failure, drops it, cuts the segment back and rethrows.
    mutating func flush() throws(JournalError) {
        if let broken { throw broken }
        guard !pending.isEmpty, let segment else { return }
        let chain = JournalFormat.appendCommitMark(after: segment.chain, lastVersion: appendedVersion, to: &pending)
        do {
            try segment.file.write(pending, at: segment.length)
            try segment.file.sync()
        } catch {
            pending.removeAll()
            appendedVersion = durableVersion
            do {
                try segment.file.truncate(to: segment.length)
                try segment.file.sync()
            } catch let cut {
                broken = JournalError(
                    .unwritable, path: segment.file.path, offset: segment.length,
                    reason: "a failed write could not be cut back (\(cut.reason)); call load() to repair the journal before writing again")
            }
            throw error
        }
        self.segment?.length += pending.count
        self.segment?.chain = chain
        pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
        durableVersion = appendedVersion
    }

    /// Starts a new segment for the next version, unless the current one holds no records yet.
    mutating func startSegmentIfUsed(in files: JournalDirectory) throws(JournalError) {
        let next = appendedVersion + 1
        guard segment?.first != next else { return }
        segment = try Self.createSegment(first: next, in: files)
        segments.append(next)
    }

    /// Creates the segment for records from `first` on (atomically, holding only the magic) and opens it
    /// for appending.
    static func createSegment(first: Int, in files: JournalDirectory) throws(JournalError) -> Segment {
        let path = files.path(of: JournalFormat.segmentName(first: first))
        try files.writeAtomically(JournalFormat.segmentMagic, to: path)
        let file = try files.open(path, O_WRONLY | O_APPEND)
        return Segment(file: file, first: first, length: JournalFormat.segmentMagic.count, chain: JournalFormat.chainSeed(first: first))
    }

    /// Records the snapshot at `version`, then deletes every snapshot but the newest two and the
    /// segments whose records the older of those two covers. Best effort: a file that cannot be deleted
    /// stays listed and is tried again next time.
    mutating func removeCovered(by version: Int, in files: JournalDirectory) {
        snapshots = Set(snapshots + [version]).sorted()
        func delete(_ name: String) -> Bool {
            (try? files.remove(files.path(of: name))) != nil
        }
        while snapshots.count > 2, delete(JournalFormat.snapshotName(version: snapshots[0])) {
            snapshots.removeFirst()
        }
        guard snapshots.count >= 2 else { return }
        let older = snapshots[snapshots.count - 2]
        // Segment 0 holds versions up to the next segment's first version minus one; the last segment,
        // appended to, is never deleted.
        while segments.count > 1, segments[1] - 1 <= older, delete(JournalFormat.segmentName(first: segments[0])) {
            segments.removeFirst()
        }
        try? files.sync()
    }
}

