/// How a ``FileJournal`` flushes a file to the disk at each sync.
///
/// A record is acknowledged only after its flush returned, so the flush decides what "durable" means:
///
/// ```swift
/// import Foundation
/// struct Add: Action, Codable {
///     var amount: Int
///     func reduce(_ total: inout Int) { total += amount }
/// }
/// let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
/// defer { try? FileManager.default.removeItem(atPath: directory) }
/// // Plain fsync on Apple platforms too: faster there, but a power cut may lose acknowledged records.
/// let journal = try FileJournal<Int, Add>(directory: directory, flush: .fsync)
/// print(journal.flush)
/// // Prints "fsync"
/// ```
public enum JournalFlush: String, Sendable, Equatable, CaseIterable {
    /// The strongest flush the platform offers; the default. On Apple platforms, `fcntl(F_FULLFSYNC)`:
    /// the data is written through the drive's own cache, so it survives a power cut. When the file
    /// system does not support that request (it fails with `ENOTSUP` or `EINVAL`, as on some network
    /// file systems), the journal falls back to `fsync` for that flush; any other failure is a failed
    /// flush. On Linux and other systems, `fsync`, which already asks the drive to write its cache out.
    case full
    /// `fsync` on every platform. On Apple platforms that hands the data to the drive but may leave it in
    /// the drive's cache, where a power cut (not a crash of the program or the system) can lose records
    /// already acknowledged. Several times faster there; choose it only where that loss is acceptable.
    /// On Linux it is the same as ``full``.
    case fsync
}
