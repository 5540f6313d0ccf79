import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, closed when the object is freed: a ``FileJournal``'s lock file and its
/// current segment. Every failure is a ``JournalError`` naming the file and the system's error text.
final class JournalFile: Sendable {
    /// The descriptor; valid until `deinit`.
    let descriptor: Int32
    /// The file's path, for messages.
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        close(descriptor)
    }

    /// Opens `path` with `flags` (close-on-exec added, so a child process never inherits a journal's
    /// lock), creating it with mode 0644 when `flags` say so.
    static func open(_ path: String, _ flags: Int32) throws(JournalError) -> JournalFile {
        var descriptor: Int32
        repeat {
            descriptor = systemOpen(path, flags | O_CLOEXEC)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            let kind: JournalError.Kind = flags & (O_WRONLY | O_RDWR) != 0 ? .unwritable : .unreadable
            throw JournalError(kind, path: path, reason: "cannot open: \(systemError())")
        }
        return JournalFile(descriptor: descriptor, path: path)
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
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            switch errno {
            case EINTR: continue
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
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if count < 0, errno == EINTR { continue }
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
                systemWrite(descriptor, UnsafeRawBufferPointer(rebasing: all[written...]))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = count < 0 ? systemError() : "the system wrote nothing"
                throw JournalError(.unwritable, path: path, offset: offset + written, reason: "cannot write: \(reason)")
            }
            written += count
        }
    }

    /// Flushes the file's data and size to the disk (`fsync`).
    func sync() throws(JournalError) {
        guard fsync(descriptor) == 0 else {
            throw JournalError(.unwritable, path: path, reason: "cannot flush to disk (fsync): \(systemError())")
        }
    }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int) throws(JournalError) {
        while ftruncate(descriptor, off_t(length)) != 0 {
            if errno == EINTR { continue }
            throw JournalError(.unwritable, path: path, offset: length, reason: "cannot truncate: \(systemError())")
        }
    }
}

/// The file-system steps of a ``FileJournal`` other than reading and appending: listing, creating
/// files atomically, renaming and deleting, each flushed where a crash could otherwise undo it.
enum JournalDirectory {
    /// The path of the file `name` in `directory`.
    static func path(of name: String, in directory: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Creates `directory` and its parents if missing.
    static func create(_ directory: String) throws(JournalError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw JournalError(.unwritable, path: directory, reason: "cannot create the directory: \(error.localizedDescription)")
        }
    }

    /// The names of the files in `directory`.
    static func names(in directory: String) throws(JournalError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw JournalError(.unreadable, path: directory, reason: "cannot list the directory: \(error.localizedDescription)")
        }
    }

    /// The whole file at `path`.
    static func read(_ path: String) throws(JournalError) -> [UInt8] {
        try JournalFile.open(path, O_RDONLY).readAll()
    }

    /// Creates or replaces `path` with `bytes` so that a crash leaves the old file or the new one, never
    /// part of it: written to `path.tmp`, flushed, renamed over `path`, and the directory flushed.
    static func writeAtomically(_ bytes: [UInt8], to path: String, in directory: String) throws(JournalError) {
        let temporary = path + ".tmp"
        let file = try JournalFile.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        try file.write(bytes, at: 0)
        try file.sync()
        try move(temporary, to: path)
        try sync(directory)
    }

    /// Creates `path` with `bytes` and flushes it (not atomically: for copies whose original stays).
    static func writeCopy(_ bytes: some Collection<UInt8>, to path: String) throws(JournalError) {
        let file = try JournalFile.open(path, O_WRONLY | O_CREAT | O_EXCL)
        try file.write(Array(bytes), at: 0)
        try file.sync()
    }

    /// Renames `source` to `destination`, replacing it.
    static func move(_ source: String, to destination: String) throws(JournalError) {
        guard rename(source, destination) == 0 else {
            throw JournalError(.unwritable, path: source, reason: "cannot rename to \(destination): \(systemError())")
        }
    }

    /// Deletes `path`.
    static func remove(_ path: String) throws(JournalError) {
        guard unlink(path) == 0 || errno == ENOENT else {
            throw JournalError(.unwritable, path: path, reason: "cannot delete: \(systemError())")
        }
    }

    /// Flushes `directory`'s entries, so that files created, renamed or deleted in it stay so after a
    /// crash.
    static func sync(_ directory: String) throws(JournalError) {
        try JournalFile.open(directory, O_RDONLY).sync()
    }

    /// `base`, or `base-2`, `base-3`, … : the first such name with no file in `directory`.
    static func unusedName(_ base: String, in directory: String) -> String {
        var name = base
        var number = 1
        while FileManager.default.fileExists(atPath: path(of: name, in: directory)) {
            number += 1
            name = "\(base)-\(number)"
        }
        return name
    }
}

/// The text of the calling thread's `errno`.
func systemError() -> String {
    String(cString: strerror(errno))
}

/// `open(2)` with mode 0644 for a file it creates (a free function: inside `JournalFile`, `open` names
/// the static method).
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags, 0o644)
}

/// `write(2)` of `bytes` (a free function: inside `JournalFile`, `write` names the method).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    write(descriptor, bytes.baseAddress, bytes.count)
}
