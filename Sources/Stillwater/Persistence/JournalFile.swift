import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations of a ``FileJournal``, every one of them, in one value the journal holds, so that
/// a test can replace them: crash at any write, tear a write at any byte, fail a flush, lose a rename
/// that was never flushed, fill the disk. ``posix`` is the real one. Each returns what its system call
/// returns and, on failure, leaves the reason in `errno`.
struct JournalSystem: Sendable {
    /// `open(2)`, creating with mode 0644; returns the descriptor or -1.
    var open: @Sendable (_ path: String, _ flags: Int32) -> Int32
    /// `close(2)`.
    var close: @Sendable (_ descriptor: Int32) -> Void
    /// `pread(2)`: bytes read at `offset`, 0 at the end, or -1.
    var read: @Sendable (_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, _ offset: Int) -> Int
    /// `write(2)` at the descriptor's position (its end, for `O_APPEND`): bytes written, or -1.
    var write: @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int
    /// Flushes a file or a directory to the disk, as ``JournalFlush`` chose: 0, or -1.
    var sync: @Sendable (_ descriptor: Int32) -> Int32
    /// `ftruncate(2)`: 0, or -1.
    var truncate: @Sendable (_ descriptor: Int32, _ length: Int) -> Int32
    /// `flock(2)` with `LOCK_EX | LOCK_NB`: 0, or -1 (`EWOULDBLOCK` when held elsewhere).
    var lock: @Sendable (_ descriptor: Int32) -> Int32
    /// `rename(2)`: 0, or -1.
    var rename: @Sendable (_ source: String, _ destination: String) -> Int32
    /// `unlink(2)`: 0, or -1.
    var remove: @Sendable (_ path: String) -> Int32
    /// Whether a file exists at `path`.
    var exists: @Sendable (_ path: String) -> Bool
    /// The names in a directory, or `nil` (with `errno`) when it cannot be listed.
    var list: @Sendable (_ directory: String) -> [String]?
    /// Creates a directory and its parents if missing: 0, or -1.
    var makeDirectory: @Sendable (_ path: String) -> Int32

    /// The operating system's calls, flushing with `F_FULLFSYNC` on Apple platforms.
    static let posix = posix(flush: .full)

    /// The operating system's calls, flushing as `flush` says.
    static func posix(flush: JournalFlush) -> JournalSystem {
        JournalSystem(
            open: { path, flags in retryingInterrupts { systemOpen(path, flags) } },
            close: { descriptor in _ = systemClose(descriptor) },
            read: { descriptor, buffer, offset in
                retryingInterrupts { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
            },
            write: { descriptor, bytes in retryingInterrupts { systemWrite(descriptor, bytes) } },
            sync: { descriptor in flushToDisk(descriptor, flush) },
            truncate: { descriptor, length in retryingInterrupts { ftruncate(descriptor, off_t(length)) } },
            lock: { descriptor in retryingInterrupts { flock(descriptor, LOCK_EX | LOCK_NB) } },
            rename: { source, destination in systemRename(source, destination) },
            remove: { path in unlink(path) },
            exists: { path in access(path, F_OK) == 0 },
            list: { directory in
                do {
                    return try FileManager.default.contentsOfDirectory(atPath: directory)
                } catch {
                    // `access` leaves the reason in `errno` (a missing directory, no permission).
                    if access(directory, R_OK) == 0 { errno = EIO }
                    return nil
                }
            },
            makeDirectory: { path in
                (try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)) != nil ? 0 : -1
            })
    }
}

/// An open file descriptor, closed when the object is freed: a ``FileJournal``'s lock file and its
/// current segment. Every failure is a ``JournalError`` naming the file and the system's error text.
final class JournalFile: Sendable {
    /// The descriptor; valid until `deinit`.
    let descriptor: Int32
    /// The file's path, for messages.
    let path: String
    /// The calls made on it.
    let system: JournalSystem

    private init(descriptor: Int32, path: String, system: JournalSystem) {
        self.descriptor = descriptor
        self.path = path
        self.system = system
    }

    deinit {
        system.close(descriptor)
    }

    /// Opens `path` with `flags` (close-on-exec added, so a child process never inherits a journal's
    /// lock), creating it with mode 0644 when `flags` say so.
    static func open(_ path: String, _ flags: Int32, _ system: JournalSystem) throws(JournalError) -> JournalFile {
        let descriptor = system.open(path, flags | O_CLOEXEC)
        guard descriptor >= 0 else {
            let kind: JournalError.Kind = flags & (O_WRONLY | O_RDWR) != 0 ? .unwritable : .unreadable
            throw JournalError(kind, path: path, reason: "cannot open: \(systemError())")
        }
        return JournalFile(descriptor: descriptor, path: path, system: system)
    }

    /// Takes an exclusive `flock` on the file, never blocking, trying again for up to `patience`.
    ///
    /// Trying again covers a child process being started by this program at that moment: between its
    /// fork and its exec it holds a copy of every descriptor, close-on-exec ones too, so a lock released
    /// just before is still held for that instant.
    ///
    /// - Returns: `false` when another open file description holds it (another process, or another
    ///   journal of this process) all that time.
    func tryLockExclusively(patience: Duration = .milliseconds(200)) throws(JournalError) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        while system.lock(descriptor) != 0 {
            switch errno {
            case EWOULDBLOCK where clock.now < deadline: usleep(2_000)
            case EWOULDBLOCK: return false
            default: throw JournalError(.unwritable, path: path, reason: "cannot lock: \(systemError())")
            }
        }
        return true
    }

    /// The whole file, read from its start.
    func readAll() throws(JournalError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { system.read(descriptor, $0, bytes.count) }
            guard count >= 0 else {
                throw JournalError(.unreadable, path: path, offset: bytes.count, reason: "cannot read: \(systemError())")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// Writes all of `bytes` at the file's end (the descriptor is opened with `O_APPEND`) or its
    /// position.
    ///
    /// - Parameter offset: Where the bytes start in the file, for the message of a failure.
    func write(_ bytes: [UInt8], at offset: Int) throws(JournalError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { all in
                system.write(descriptor, UnsafeRawBufferPointer(rebasing: all[written...]))
            }
            guard count > 0 else {
                let reason = count < 0 ? systemError() : "the system wrote nothing"
                throw JournalError(.unwritable, path: path, offset: offset + written, reason: "cannot write: \(reason)")
            }
            written += count
        }
    }

    /// Flushes the file's data and size to the disk (`fsync`, or `F_FULLFSYNC` on Apple platforms).
    func sync() throws(JournalError) {
        guard system.sync(descriptor) == 0 else {
            throw JournalError(.unwritable, path: path, reason: "cannot flush to disk (fsync): \(systemError())")
        }
    }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int) throws(JournalError) {
        guard system.truncate(descriptor, length) == 0 else {
            throw JournalError(.unwritable, path: path, offset: length, reason: "cannot truncate: \(systemError())")
        }
    }
}

/// A ``FileJournal``'s directory and the file-system steps on it other than reading and appending:
/// listing, creating files atomically, renaming and deleting, each flushed where a crash could otherwise
/// undo it, all through one ``JournalSystem``.
struct JournalDirectory: Sendable {
    /// The directory's path, as given to the journal.
    let directory: String
    /// The calls made.
    let system: JournalSystem

    /// The path of the file `name` in `directory`.
    static func path(of name: String, in directory: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The path of the file `name` in the directory.
    func path(of name: String) -> String {
        Self.path(of: name, in: directory)
    }

    /// Opens `path`; see ``JournalFile/open(_:_:_:)``.
    func open(_ path: String, _ flags: Int32) throws(JournalError) -> JournalFile {
        try JournalFile.open(path, flags, system)
    }

    /// Creates the directory and its parents if missing.
    func create() throws(JournalError) {
        guard system.makeDirectory(directory) == 0 else {
            throw JournalError(.unwritable, path: directory, reason: "cannot create the directory: \(systemError())")
        }
    }

    /// The names of the files in the directory.
    func names() throws(JournalError) -> [String] {
        guard let names = system.list(directory) else {
            throw JournalError(.unreadable, path: directory, reason: "cannot list the directory: \(systemError())")
        }
        return names
    }

    /// The whole file at `path`.
    func read(_ path: String) throws(JournalError) -> [UInt8] {
        try open(path, O_RDONLY).readAll()
    }

    /// Creates or replaces `path` with `bytes` so that a crash leaves the old file or the new one, never
    /// part of it: written to `path.tmp`, flushed, renamed over `path`, and the directory flushed.
    func writeAtomically(_ bytes: [UInt8], to path: String) throws(JournalError) {
        let temporary = path + ".tmp"
        let file = try open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        try file.write(bytes, at: 0)
        try file.sync()
        try move(temporary, to: path)
        try sync()
    }

    /// Creates `path` with `bytes` and flushes it (not atomically: for copies whose original stays).
    func writeCopy(_ bytes: some Collection<UInt8>, to path: String) throws(JournalError) {
        let file = try open(path, O_WRONLY | O_CREAT | O_EXCL)
        try file.write(Array(bytes), at: 0)
        try file.sync()
    }

    /// Renames `source` to `destination`, replacing it.
    func move(_ source: String, to destination: String) throws(JournalError) {
        guard system.rename(source, destination) == 0 else {
            throw JournalError(.unwritable, path: source, reason: "cannot rename to \(destination): \(systemError())")
        }
    }

    /// Deletes `path`.
    func remove(_ path: String) throws(JournalError) {
        guard system.remove(path) == 0 || errno == ENOENT else {
            throw JournalError(.unwritable, path: path, reason: "cannot delete: \(systemError())")
        }
    }

    /// Flushes the directory's entries, so that files created, renamed or deleted in it stay so after a
    /// crash.
    func sync() throws(JournalError) {
        try open(directory, O_RDONLY).sync()
    }

    /// `base`, or `base-2`, `base-3`, … : the first such name with no file in the directory.
    func unusedName(_ base: String) -> String {
        var name = base
        var number = 1
        while system.exists(path(of: name)) {
            number += 1
            name = "\(base)-\(number)"
        }
        return name
    }
}

/// `call`'s result, calling it again while it fails (a negative result) with `EINTR`.
private func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    var result: Result
    repeat {
        result = call()
    } while result < 0 && errno == EINTR
    return result
}

/// The text of the calling thread's `errno`.
func systemError() -> String {
    String(cString: strerror(errno))
}

/// `open(2)` with mode 0644 for a file it creates (a free function: inside `JournalSystem`, `open` names
/// the property).
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags, 0o644)
}

/// `close(2)`.
private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}

/// `write(2)` of `bytes`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    write(descriptor, bytes.baseAddress, bytes.count)
}

/// Flushes `descriptor`'s data and size to the disk: `fcntl(F_FULLFSYNC)` on Apple platforms unless
/// `flush` is `.fsync` (falling back to `fsync` when the file system does not support it), `fsync`
/// elsewhere. Never retried, not even on `EINTR`: a flush that failed may have lost pages, and the
/// journal stops on it.
private func flushToDisk(_ descriptor: Int32, _ flush: JournalFlush) -> Int32 {
    #if canImport(Darwin)
    // Compiled on Apple platforms only (not built or run on the Linux machines this was written on). A
    // plain `fsync` there hands the data to the drive, whose cache may still lose it at a power cut;
    // `F_FULLFSYNC` asks the drive to write its cache out.
    if flush == .full {
        let result = fcntl(descriptor, F_FULLFSYNC)
        // ENOTSUP, EINVAL: a file system without the request (some network and FUSE file systems).
        guard result == -1, errno == ENOTSUP || errno == EINVAL else { return result }
    }
    #endif
    return fsync(descriptor)
}

/// `rename(2)`.
private func systemRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}
