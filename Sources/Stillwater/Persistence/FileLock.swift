import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a file, for "one process at a time" on a folder (a server's data folder, say):
/// an `flock` held until the lock is freed or the process ends, with the holder's process id written in
/// the file so that a process refused can say which one holds it.
///
/// It is taken as a ``FileJournal`` takes its directory's lock: never blocking, it tries again for up to
/// `patience` (a child process being started at that moment holds a copy of every descriptor until it
/// runs its program), and child processes never inherit it. A second lock on the same file in this
/// process is refused too.
///
/// ```swift
/// import Foundation
/// let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).lock").path
/// defer { try? FileManager.default.removeItem(atPath: path) }
/// let lock = try FileLock(path: path)
/// do throws(FileLockError) {
///     _ = try FileLock(path: path, patience: .zero)
/// } catch {
///     print(error.kind, error.holder == ProcessInfo.processInfo.processIdentifier)
/// }
/// withExtendedLifetime(lock) {}
/// // Prints "held true"
/// ```
///
/// Cost: an `open`, an `flock` and a write of a few bytes; freeing it closes the file.
public final class FileLock: Sendable {
    /// The locked file's path, as given.
    public let path: String
    /// Holds the `flock` until freed.
    private let file: JournalFile

    /// Takes the lock on the file at `path` (made, with mode 0644, when missing) and writes this
    /// process's id in it.
    ///
    /// While another holds the lock, this waits on the calling thread (polling) for up to `patience`
    /// before it throws.
    ///
    /// - Parameters:
    ///   - path: The file to lock, made when missing; its folder must exist.
    ///   - patience: How long to try again while another holds the lock (0.2 s unless set).
    /// - Throws: ``FileLockError`` of kind ``FileLockError/Kind/held`` naming the holder's process id
    ///   when another process (or another lock in this one) holds it all that time (the file is left as
    ///   it is), or ``FileLockError/Kind/failed`` when the file cannot be opened or locked.
    public init(path: String, patience: Duration = .milliseconds(200)) throws(FileLockError) {
        let system = JournalSystem.posix
        let file: JournalFile
        let locked: Bool
        do throws(JournalError) {
            file = try JournalFile.open(path, O_RDWR | O_CREAT, system)
            locked = try file.tryLockExclusively(patience: patience)
        } catch {
            throw FileLockError(kind: .failed, path: path, holder: nil, reason: error.reason)
        }
        guard locked else {
            let text = (try? file.readAll()).map { String(decoding: $0, as: UTF8.self) } ?? ""
            let holder = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            throw FileLockError(kind: .held, path: path, holder: holder, reason: "held by another process")
        }
        // The id is for whoever is refused; a lock whose file cannot take it still holds.
        if system.truncate(file.descriptor, 0) == 0 {
            try? file.write(Array("\(ProcessInfo.processInfo.processIdentifier)\n".utf8), at: 0)
        }
        self.path = path
        self.file = file
    }
}

/// Why a ``FileLock`` could not be taken.
public struct FileLockError: Error, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// Another process, or another lock in this one, holds the lock.
        case held
        /// The file cannot be opened or locked (a missing folder, no permission).
        case failed
    }

    /// What went wrong.
    public var kind: Kind
    /// The lock file's path.
    public var path: String
    /// For ``Kind/held``: the process id the holder wrote in the file, when it holds one.
    public var holder: Int32?
    /// Why, in words (the system's error text for ``Kind/failed``).
    public var reason: String

    /// `PATH: REASON`, with the holder's process id when known.
    public var description: String {
        "\(path): \(reason)" + (holder.map { " (pid \($0))" } ?? "")
    }
}
