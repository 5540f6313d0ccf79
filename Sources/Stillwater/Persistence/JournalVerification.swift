#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``FileJournal/verify(directory:)`` found in a journal's directory: the damage, the repairs a load
/// would make, and the version a load would reach.
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
///     try journal.sync()
/// }
/// let report = try FileJournal<Int, Add>.verify(directory: directory)
/// print(report.damage.isEmpty, report.repairs.isEmpty, report.version)
/// // Prints "true true 1"
/// ```
public struct JournalVerification: Sendable, Equatable {
    /// The damage found, one error per place, each ``JournalError/Kind/corrupt`` (a record, mark,
    /// segment or gap that fails its check) or ``JournalError/Kind/decoding`` (intact, of another
    /// type). Empty when ``FileJournal/load()`` would succeed; otherwise a load throws the first.
    public var damage: [JournalError]
    /// One line per repair a load would make: a torn end it would cut, a snapshot it would set aside.
    public var repairs: [String]
    /// The version a load would reach (the newest usable snapshot's, or the last record's after it); with
    /// damage, as far as the records could be read.
    public var version: Int

    /// Creates a report (for tests of code that shows one).
    public init(damage: [JournalError], repairs: [String], version: Int) {
        self.damage = damage
        self.repairs = repairs
        self.version = version
    }
}

extension FileJournal {
    /// Checks every file of the journal in `directory` (every segment and snapshot, every record and
    /// commit mark, the versions, and the decoding of what a load would return), and reports what it
    /// found without changing anything.
    ///
    /// It takes the directory's lock for the time it reads, so it never runs beside a journal that has
    /// the directory open.
    ///
    /// - Parameter directory: The journal's directory, as given to ``init(directory:)``.
    /// - Returns: The damage, the repairs a ``load()`` would make, and the version it would reach.
    /// - Throws: ``JournalError``: ``JournalError/Kind/locked`` when a journal has the directory open,
    ///   ``JournalError/Kind/unreadable`` when the directory or a file in it cannot be read.
    /// - Complexity: Reads every byte of the directory's journal files, and decodes the records after
    ///   the newest usable snapshot.
    public static func verify(directory: String) throws -> JournalVerification {
        let files = JournalDirectory(directory: directory, system: .posix)
        let lockPath = files.path(of: "lock")
        var lock: JournalFile?
        if files.system.exists(lockPath) {
            let file = try files.open(lockPath, O_RDONLY)
            guard try file.tryLockExclusively() else {
                throw JournalError(
                    .locked, path: lockPath, reason: "locked: a journal has this directory open; stop it before verifying")
            }
            lock = file
        }
        defer { withExtendedLifetime(lock) {} }
        let loader = FileJournalLoader<State, JournaledAction>(files: files)
        let examination = try loader.examine()
        return JournalVerification(
            damage: examination.damage, repairs: examination.repairs.map(loader.describe),
            version: examination.contents.version)
    }
}
