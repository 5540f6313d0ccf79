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
/// disk: `F_FULLFSYNC` on Apple platforms, `fsync` elsewhere; see ``JournalFlush``); each sync ends its
/// batch of records with a commit mark. Snapshots are written to
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
/// `init` reads nothing (it starts the writer thread, below). Call ``load()`` once first: it reads the files, repairs a torn end, and tells
/// the version to append after. ``append(_:version:)``, ``sync()`` and `writeSnapshot(_:version:)`
/// before it stop the program with a message saying so. Calling `load()` again re-reads the files;
/// records appended since the last sync are dropped.
///
/// ## When a write fails
///
/// After a write or a flush fails (a full disk, an I/O error), the journal stops: that call throws the
/// system's error (``JournalError/Kind/unwritable``), and every later write (``append(_:version:)``,
/// ``sync()``, `writeSnapshot(_:version:)`, ``append(_:)``, and the appends already waiting for the
/// same flush) throws ``JournalError/Kind/stopped`` until the journal is reopened with ``load()`` or
/// ``open()``. Nothing more is written to the files meanwhile. After a failed flush the system may have
/// dropped the data it was given while still reporting later flushes as successful, so the journal
/// does not guess what reached the disk and does not retry. None of the records of the failed write
/// was acknowledged: whoever appended them must treat them as not done
/// (``Middleware/journaling(to:startingAfter:snapshotEvery:onError:)`` does not reduce such an action).
///
/// Reads go on: ``head()`` returns the last version whose flush returned, and
/// ``records(after:limit:)`` reads the records up to it.
///
/// Reopening checks the end of the segment as after a crash: the bytes after the last completed flush
/// (the failed write's, whole or in part) are a torn write, copied to `<segment>.torn-<unix seconds>`,
/// cut off and flushed, with a warning in ``JournalContents/warnings``; the directory is flushed again
/// (a failed step may have created or renamed a file whose name is not durable yet); then the files are read as
/// ``load()`` always reads them, and the journal continues from the last acknowledged version. If the
/// disk still fails, the reopen throws and the journal stays stopped.
///
/// ## The writer thread
///
/// Every file operation after `init` (writes, flushes, snapshots, loads, reads) runs on a thread the
/// journal starts for itself, named `Stillwater.FileJournal writer`, so a flush never holds a thread of
/// Swift's cooperative pool: the async methods (``append(_:)``, `writeSnapshot(_:version:)`,
/// ``records(after:limit:)``, ``open()``) suspend until it answers; the synchronous ones block the
/// calling thread, as a write of their own would. Requests run in the order they arrive.
///
/// Appends that arrive while a write and its flush are in progress are written together and covered
/// by the next single flush (group commit): each ``append(_:)`` still gets its own contiguous range of
/// versions, in the order the calls arrived, and returns only after the flush that covers it returned.
/// So with many concurrent appenders a flush covers many appends, and the cost of a flush is shared.
///
/// The thread ends when the journal is freed: its `deinit` waits for the thread to finish (at most the
/// write in progress, since a journal that is freed has no caller waiting) and then releases the
/// directory.
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
/// `writeSnapshot(_:version:)` first syncs, then starts a new segment (named for the next version to
/// append) when the current one holds records, then writes the snapshot. It keeps the newest two
/// snapshots and deletes older ones, and deletes the segments whose records are all covered by the older
/// of the two kept. So when the newest snapshot turns out damaged, ``load()`` falls back to the older one
/// and still finds every record after it. A file it cannot delete is tried again at the next snapshot.
/// The deletions end with a flush of the directory; when that flush fails, the call throws and the
/// journal stops, as after any failed flush, though the snapshot itself was durable by then.
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
/// snapshot never costs an acknowledged record. The next `writeSnapshot(_:version:)` restores two
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
/// - Note: A snapshot runs alone on the writer thread: appends that arrive while it is written (two
///   flushes for a new segment, two for the snapshot) wait and are then written together. Encoding in
///   ``append(_:version:)``, ``append(_:)`` and `writeSnapshot(_:version:)` runs on the calling
///   thread; decoding in ``load()`` and ``records(after:limit:)`` on the writer thread.
/// - Complexity: ``append(_:version:)`` encodes the action and copies it into memory; ``sync()`` costs
///   one `write` and one flush for everything appended since the last one, so syncing after a batch of
///   appends costs one flush for the batch; concurrent ``append(_:)`` calls share flushes (see "The
///   writer thread"). ``load()`` reads each segment it needs whole.
public final class FileJournal<State: Codable & Sendable, JournaledAction: Action & Codable & Sendable>: ActionJournal
where JournaledAction.State == State {
    /// The directory the journal's files are in, as given to `init`.
    public let directory: String
    /// How the journal flushes its files to the disk, as given to `init` (``JournalFlush/full`` unless
    /// chosen otherwise).
    public let flush: JournalFlush
    /// Holds the directory's `flock` for the journal's life.
    private let lockFile: JournalFile
    /// The writer thread, which makes every file operation after `init`, and the state callers share
    /// with it (internal: tests look at its queue).
    let writer: JournalWriter

    /// Opens the journal in `directory`, creating the directory if it is missing, and locks it; its
    /// flushes are ``JournalFlush/full``.
    ///
    /// Reads nothing yet: call ``load()`` next.
    ///
    /// - Parameter directory: The directory of the journal's files; created, with its parents, when
    ///   missing.
    /// - Throws: ``JournalError/Kind/locked`` when another journal (in any process) has the directory
    ///   open; ``JournalError/Kind/unwritable`` when the directory or its lock file cannot be created.
    public convenience init(directory: String) throws {
        try self.init(directory: directory, flush: .full)
    }

    /// Opens the journal in `directory`, flushing as `flush` says, creating the directory if it is
    /// missing, and locks it.
    ///
    /// Reads nothing yet: call ``load()`` next. ``JournalFlush`` has an example.
    ///
    /// - Parameters:
    ///   - directory: The directory of the journal's files; created, with its parents, when missing.
    ///   - flush: How each sync flushes the files to the disk; see ``JournalFlush``.
    /// - Throws: ``JournalError/Kind/locked`` when another journal (in any process) has the directory
    ///   open; ``JournalError/Kind/unwritable`` when the directory or its lock file cannot be created.
    public convenience init(directory: String, flush: JournalFlush) throws {
        try self.init(directory: directory, system: .posix(flush: flush), flush: flush)
    }

    /// Opens the journal in `directory` with every file operation made through `system` (a test's, to
    /// inject faults).
    init(directory: String, system: JournalSystem, flush: JournalFlush = .full) throws {
        self.directory = directory
        self.flush = flush
        guard !directory.isEmpty else {
            throw JournalError(.unwritable, path: directory, reason: "the directory's path is empty")
        }
        let files = JournalDirectory(directory: directory, system: system)
        try files.create()
        let lockFile = try files.open(files.path(of: "lock"), O_RDWR | O_CREAT)
        guard try lockFile.tryLockExclusively() else {
            throw JournalError(
                .locked, path: lockFile.path,
                reason: "locked: another journal has this directory open (in this process or another); one journal may use a directory at a time")
        }
        self.lockFile = lockFile
        writer = JournalWriter(files: files)
    }

    /// Ends the writer thread (waiting for it), then releases the directory.
    deinit {
        writer.close()
    }

    /// Reads the newest usable snapshot and the records after it, repairing a torn end of the last
    /// segment (see "What load reads and repairs" above); after a failed write, reopens the journal (see
    /// "When a write fails").
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
        try writer.perform(runsWhenStopped: true) { files, writer, reply in reply(Self.reopen(&files, writer)) }
    }

    /// Appends `action` as the record of `version`, in memory; ``sync()`` writes it.
    ///
    /// - Parameters:
    ///   - action: Encoded now, as JSON with sorted keys.
    ///   - version: Exactly one more than the last appended version (or the version ``load()``
    ///     reported); anything else stops the program with a message naming it.
    /// - Throws: ``JournalError/Kind/encoding`` when the action cannot be encoded or encodes to more than
    ///   16 MiB (nothing is appended then); ``JournalError/Kind/stopped`` after a failed write (see "When
    ///   a write fails").
    public func append(_ action: JournaledAction, version: Int) throws {
        let payload = try payload(of: action, what: "the action of version \(version)")
        try writer.shared.withLock { shared throws(JournalError) in
            JournalRules.requireLoaded(shared.loaded, "FileJournal", "append(_:version:)")
            if let stop = shared.queue.stop { throw stop }
            JournalRules.requireNext(version, after: shared.appendedVersion, "FileJournal")
            JournalFormat.appendRecord(version: version, payload: payload, to: &shared.pending)
            shared.appendedVersion = version
        }
    }

    /// Writes every appended record to the current segment and flushes it to the disk, on the writer
    /// thread, blocking the calling thread until the flush returned.
    ///
    /// Returns without writing when nothing was appended since the last sync. Appends that other
    /// callers make meanwhile through ``append(_:)`` may share its write and flush.
    ///
    /// - Throws: ``JournalError/Kind/unwritable``, with the system's error text, when the write or the
    ///   flush fails: the journal then stops (see "When a write fails"); ``JournalError/Kind/stopped``
    ///   when it had stopped before.
    public func sync() throws {
        requireLoaded("sync()")
        _ = try writer.append([])
    }

    /// Syncs, then writes `state` as the snapshot at `version` and deletes what the newest two snapshots
    /// make unneeded (see "Snapshots and what is kept"), on the writer thread, blocking the calling
    /// thread until it is done.
    ///
    /// The snapshot is durable when this returns.
    ///
    /// - Parameters:
    ///   - state: The state after the action with `version`; encoded now, as JSON with sorted keys.
    ///   - version: At most the last appended version; otherwise the program stops with a message naming
    ///     it.
    /// - Throws: ``JournalError``: ``JournalError/Kind/encoding`` when the state cannot be encoded
    ///   (nothing is written, and the journal goes on); ``JournalError/Kind/unwritable`` when a write, a
    ///   flush or a rename fails, which stops the journal (see "When a write fails");
    ///   ``JournalError/Kind/stopped`` when it had stopped before.
    /// - Complexity: Encodes the whole state and writes it with two flushes (file and directory).
    public func writeSnapshot(_ state: State, version: Int) throws {
        let json = try snapshotJSON(state, version: version)
        try writer.perform(runsWhenStopped: false) { files, writer, reply in
            reply(Result { () throws(JournalError) in try Self.writeSnapshot(json, version: version, &files, writer) })
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

    /// Checks that the journal was loaded (stopping the program with a message naming `method`
    /// otherwise).
    private func requireLoaded(_ method: String) {
        let loaded = writer.shared.withLock { $0.loaded }
        JournalRules.requireLoaded(loaded, "FileJournal", method)
    }

    /// The snapshot file's JSON of `state`, after checking `version` against the last appended one.
    private func snapshotJSON(_ state: State, version: Int) throws(JournalError) -> Data {
        let json = try encode(SnapshotBody(version: version, state: state), what: "the state of version \(version)")
        writer.shared.withLock { shared in
            JournalRules.requireLoaded(shared.loaded, "FileJournal", "writeSnapshot(_:version:)")
            JournalRules.requireSnapshotVersion(version, appended: shared.appendedVersion, "FileJournal")
        }
        return json
    }

    // MARK: On the writer thread

    /// `load()` on the writer thread: after a failed write, first cuts what follows the last completed
    /// flush off the segment as a torn write (kept aside); then reads the files and opens the segment.
    private static func reopen(
        _ files: inout FileJournalState, _ writer: JournalWriter
    ) -> Result<JournalContents<State, JournaledAction>, JournalError> {
        let loader = FileJournalLoader<State, JournaledAction>(files: writer.files)
        var warnings: [String] = []
        do throws(JournalError) {
            if writer.shared.withLock({ $0.queue.stop != nil }) {
                if let segment = files.segment {
                    // A failed write left bytes after the last completed flush, perhaps even a whole commit
                    // mark: never acknowledged, so cut before anything is read, as a crash's torn write is.
                    let name = JournalFormat.segmentName(first: segment.first)
                    if let warning = try loader.cutTail(
                        of: name, at: segment.length, problem: "written after the last completed flush, by a write or flush that failed")
                    {
                        warnings.append(warning)
                    }
                }
                // A failed flush of the directory may have left a new segment's name (created, renamed)
                // not durable, and the load below would append to it: flush the names it will read first.
                try writer.files.sync()
            }
            // A load that throws leaves the journal unloaded: nothing is written after an error it reported.
            files = FileJournalState()
            writer.shared.withLock { shared in
                shared.loaded = false
                shared.pending = []
            }
            var (contents, opened) = try loader.load()
            files = opened
            writer.shared.withLock { shared in
                shared.loaded = true
                shared.appendedVersion = contents.version
                shared.durableVersion = contents.version
                shared.queue.reopened()
            }
            contents.warnings = warnings + contents.warnings
            return .success(contents)
        } catch {
            return .failure(error)
        }
    }

    /// `writeSnapshot` on the writer thread: writes the pending records, starts a new segment when the
    /// current one holds records, writes the snapshot and deletes what it makes unneeded. A failure stops
    /// the journal.
    private static func writeSnapshot(
        _ json: Data, version: Int, _ files: inout FileJournalState, _ writer: JournalWriter
    ) throws(JournalError) {
        let pending = writer.takePending()
        try writer.write(pending, &files)
        try writer.stopping { () throws(JournalError) in
            try files.startSegmentIfUsed(next: pending.lastVersion + 1, in: writer.files)
            let path = writer.files.path(of: JournalFormat.snapshotName(version: version))
            try writer.files.writeAtomically(JournalFormat.snapshotFile(version: version, json: json), to: path)
        }
        // The deletions are best effort; the flush that makes them durable is a flush like any other.
        try writer.stopping { () throws(JournalError) in try files.removeCovered(by: version, in: writer.files) }
    }
}

extension FileJournal: ActionLog {
    /// The type of entry the journal's records hold: its actions.
    public typealias Entry = JournaledAction

    /// Loads the journal (see ``load()``) on the writer thread and returns what it holds as a log's
    /// contents; after a failed write, reopens it (see "When a write fails").
    ///
    /// - Throws: What ``load()`` throws.
    public func open() async throws -> ActionLogContents<State, JournaledAction> {
        let contents = try await writer.perform(runsWhenStopped: true) { files, writer, reply in
            reply(Self.reopen(&files, writer))
        }
        return ActionLogContents(contents)
    }

    /// Appends `entries` as the records of the next versions, writes them and flushes them to the disk,
    /// and returns their versions.
    ///
    /// The write and the flush run on the journal's writer thread; the calling task is suspended until
    /// the flush that covers the entries returned. Appends that arrive while a flush is in progress are
    /// written together and share the next flush (see "The writer thread"); each call gets a contiguous
    /// range of versions, in the order the calls arrived.
    ///
    /// - Parameter entries: At least one entry (an empty array stops the program); encoded now, as JSON
    ///   with sorted keys.
    /// - Returns: The versions the entries made, in order.
    /// - Throws: ``JournalError/Kind/encoding`` when an entry cannot be encoded (nothing is appended);
    ///   ``JournalError/Kind/unwritable`` when the write or the flush fails: none of the entries is
    ///   acknowledged, and the journal stops; ``JournalError/Kind/stopped`` when it had stopped (see
    ///   "When a write fails").
    public func append(_ entries: [JournaledAction]) async throws -> ClosedRange<Int> {
        ActionLogRules.requireEntries(entries.count, "FileJournal")
        let payloads = try entries.enumerated().map { index, entry throws(JournalError) in
            try payload(of: entry, what: "entry \(index) of the append")
        }
        requireLoaded("append(_:)")
        let versions = try await writer.append(payloads)
        return versions.lowerBound...(versions.upperBound - 1)
    }

    /// Syncs, then writes `state` as the snapshot at `version` and deletes what the newest two snapshots
    /// make unneeded (see "Snapshots and what is kept"), on the writer thread, suspending the calling
    /// task until it is done.
    ///
    /// The snapshot is durable when this returns.
    ///
    /// This is the method ``ActionLog`` calls (in generic code and through `any ActionLog`). Called on a
    /// `FileJournal` value, Swift picks the synchronous `writeSnapshot(_:version:)` even in async code (the
    /// compiler then warns that nothing is awaited), which blocks the calling thread while the writer
    /// thread works.
    ///
    /// - Parameters:
    ///   - state: The state after the action with `version`; encoded now, on the calling task, as JSON
    ///     with sorted keys.
    ///   - version: At most the last appended version; otherwise the program stops with a message naming
    ///     it.
    /// - Throws: ``JournalError``: ``JournalError/Kind/encoding`` when the state cannot be encoded
    ///   (nothing is written, and the journal goes on); ``JournalError/Kind/unwritable`` when a write, a
    ///   flush or a rename fails, which stops the journal (see "When a write fails");
    ///   ``JournalError/Kind/stopped`` when it had stopped before.
    /// - Complexity: Encodes the whole state and writes it with two flushes (file and directory).
    public func writeSnapshot(_ state: State, version: Int) async throws {
        let json = try snapshotJSON(state, version: version)
        try await writer.perform(runsWhenStopped: false) { files, writer, reply in
            reply(Result { () throws(JournalError) in try Self.writeSnapshot(json, version: version, &files, writer) })
        }
    }

    /// The durable records after `version`, at most `limit`, read back from the segments on the writer
    /// thread.
    ///
    /// Records covered by the older of the two kept snapshots may be deleted already (see "Snapshots
    /// and what is kept"); the first record returned is then later than `version + 1`. Works after a
    /// failed write too, up to the last version whose flush returned.
    ///
    /// - Throws: ``JournalError``: ``JournalError/Kind/corrupt`` when a segment read is damaged,
    ///   ``JournalError/Kind/decoding`` or ``JournalError/Kind/unreadable``.
    /// - Complexity: Reads the segments that hold the records asked for, whole, in turn with the writes.
    public func records(after version: Int, limit: Int) async throws -> [ActionLogRecord<JournaledAction>] {
        ActionLogRules.requireLimit(limit, "FileJournal")
        requireLoaded("records(after:limit:)")
        return try await writer.perform(runsWhenStopped: true) { files, writer, reply in
            reply(Result { () throws(JournalError) in
                try FileJournalLoader<State, JournaledAction>(files: writer.files)
                    .durableRecords(after: version, limit: limit, in: files)
                    .map { ActionLogRecord(version: $0.version, entry: $0.action) }
            })
        }
    }

    /// The last durable version: the last synced record's, or the loaded snapshot's. After a failed
    /// write, still the last version whose flush returned.
    public func head() async throws -> Int {
        writer.shared.withLock { shared in
            JournalRules.requireLoaded(shared.loaded, "FileJournal", "head()")
            return shared.durableVersion
        }
    }
}

/// What a snapshot file's JSON holds.
struct SnapshotBody<State: Codable>: Codable {
    var version: Int
    var state: State
}

/// The files a ``FileJournal`` appends to, known only to its writer thread (a local variable there).
struct FileJournalState {
    /// The segment appended to; set by `load()`.
    var segment: Segment?
    /// The first versions of every segment file, ascending; the last is `segment`'s.
    var segments: [Int] = []
    /// The versions of the snapshot files kept, ascending.
    var snapshots: [Int] = []

    /// The segment appended to.
    struct Segment {
        var file: JournalFile
        /// The version in its name.
        var first: Int
        /// Its length after the last completed flush: what a reopen after a failed write cuts back to.
        var length: Int
        /// The checksum of its last commit mark, which the next one chains from.
        var chain: UInt32
    }

    /// Starts a new segment for `next`, the next version to append, unless the current one holds no
    /// records yet.
    mutating func startSegmentIfUsed(next: Int, in files: JournalDirectory) throws(JournalError) {
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
    /// segments whose records the older of those two covers, and flushes the directory. The deletions
    /// are best effort: a file that cannot be deleted stays listed and is tried again next time. A failed
    /// flush of the directory is thrown (the journal stops on it, as on any failed flush).
    mutating func removeCovered(by version: Int, in files: JournalDirectory) throws(JournalError) {
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
        try files.sync()
    }
}

