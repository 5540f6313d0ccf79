import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The JSON file a todo list is kept in: read at start, written (after a check of what it holds) by the
/// session's save effect, a moment after the last change and at every exit (see ``TodoSaveAction``).
///
/// What it guarantees:
/// - **Nothing that is not this program's list is ever changed.** A file without the format marker
///   (`"format": "stillwater-todo"`; see ``TodoFormat``) is refused on load and on save, untouched. Only a
///   file that is recognisably a damaged todo list is set aside (renamed to `PATH.corrupt-<time>`).
/// - **Writes are atomic:** the list goes to a temporary file in the same folder, is flushed to disk, and
///   is renamed over the old file, so a crash mid-write leaves the old list or the new one, never half.
/// - **Another program's change is never overwritten unseen.** ``update(to:from:)`` is given the list
///   this program last read or wrote; when the file holds something else by then (another `todo` saved),
///   both sides' changes are merged (``TodoMerge``) and the caller is told. Saves of all `todo`s in one
///   folder take turns (an advisory lock on the folder), so none slips in between the check and the
///   write.
/// - **Write permission is respected**, even by root: a list file or folder that no one may write
///   (no `w` bit in its mode) is refused with ``TodoFileError/readOnly(path:)`` or
///   ``TodoFileError/folderUnwritable(path:folder:reason:)``, and nothing is written.
/// - Fields the program does not know are kept (``TodoItem/otherFields``, ``TodoList/otherFields``).
/// - Only regular files are read or written: a device, a pipe or a socket given as the path is refused.
/// - A file that root saves over keeps its owner and group, so `sudo todo` does not take a user's list.
///
/// The lock coordinates `todo` processes only; another program that writes the file is still noticed at
/// the next save (its change is merged in, or the file, if no longer a list, is left alone).
///
/// ```swift
/// import Foundation
///
/// let file = TodoFile(path: NSTemporaryDirectory() + "todo-\(UUID().uuidString).json")
/// try file.save(TodoList(titles: ["milk"]))
/// if case .loaded(let list) = try file.load() { print(list.items.map(\.title)) }
/// // Prints "[\"milk\"]"
/// ```
public struct TodoFile: Equatable, Sendable {
    /// The current format version; files of a later version are refused, not set aside.
    public static let version = TodoFormat.version

    /// The file's path, with symbolic links resolved (so saving replaces the file a link points to, not
    /// the link).
    public let path: String

    /// The folder the file is in.
    public var folder: String { (path as NSString).deletingLastPathComponent }

    /// The list this value last wrote and its bytes, so that ``update(to:from:)`` need not encode the
    /// known list again to compare it with the file.
    private let lastWrite = LastWrite()

    /// The file at `path` (relative paths are relative to the current directory).
    public init(path: String) {
        let url = URL(fileURLWithPath: path)
        self.path = url.resolvingSymlinksInPath().path
    }

    /// Whether both name the same file.
    public static func == (left: TodoFile, right: TodoFile) -> Bool {
        left.path == right.path
    }

    /// `~/.stillwater-todo.json`: in the folder named by `HOME`, or, without it, the home directory of the
    /// user running the program.
    public static var defaultPath: String {
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        return (home as NSString).appendingPathComponent(".stillwater-todo.json")
    }

    /// What ``load(now:)`` found.
    public enum LoadResult: Equatable, Sendable {
        /// There is no file yet: start with an empty list (the first change creates the file).
        case missing
        /// The file held this list (an empty file holds an empty one).
        case loaded(TodoList)
        /// The file was a damaged todo list: it was renamed to `movedTo`, and the list starts empty.
        /// `reason` says what was wrong with it.
        case setAside(reason: String, movedTo: String)

        /// The list to start with: the loaded one, or an empty one.
        public var list: TodoList {
            if case .loaded(let list) = self { return list }
            return TodoList()
        }
    }

    /// What ``update(to:from:)`` did.
    public enum SaveResult: Equatable, Sendable {
        /// The list was written.
        case saved
        /// The file already held the list; nothing was written.
        case unchanged
        /// Another program had changed the file: the two lists were merged, and `merge.list` was written.
        /// Continue from `merge.list`. Also when the merge came out as the list given, but dropped a
        /// change of the other program's (`merge.conflicts` says which).
        case merged(TodoMerge)
    }

    /// Reads the list.
    ///
    /// A missing file is ``LoadResult/missing``. A file that is recognisably a damaged todo list (it has
    /// the format marker but is broken) is renamed to `PATH.corrupt-<now, as yyyyMMdd-HHmmss>` (with
    /// `-2`, `-3`… if that exists too) and reported as ``LoadResult/setAside(reason:movedTo:)``. An empty
    /// file (zero bytes or only whitespace) holds nothing to lose and loads as an empty list.
    ///
    /// - Parameter now: The time used in the name of a set-aside file.
    /// - Throws: ``TodoFileError`` — and the file is left exactly as it was — when the path is a folder,
    ///   cannot be read, is not this program's list (plain text, other JSON), was written by a later
    ///   version, holds an identity outside ``TodoList/identities``, or is damaged but cannot be renamed.
    public func load(now: Date = Date()) throws(TodoFileError) -> LoadResult {
        try withFolderLocked { () throws(TodoFileError) in try loadLocked(now: now) }
    }

    private func loadLocked(now: Date) throws(TodoFileError) -> LoadResult {
        guard let data = try read() else {
            guard isFolder(folder) else { throw .folderMissing(path: path, folder: folder) }
            return .missing
        }
        switch TodoFormat.parse(data) {
        case .empty: return .loaded(TodoList())
        case .list(let list): return .loaded(list)
        case .notATodoList(let found): throw .notATodoList(path: path, found: found)
        case .newerVersion(let version): throw .newerVersion(path: path, version: version)
        case .badIdentity(let detail): throw .badIdentity(path: path, detail: detail)
        case .damaged(let reason): return .setAside(reason: reason, movedTo: try setAside(now: now))
        }
    }

    /// Writes `list`, replacing the todo list the file holds (if any) whatever it is: for a file only
    /// this program uses. ``update(to:from:)`` is the safe form when other programs may write the file.
    ///
    /// - Throws: ``TodoFileError``, with the file untouched, when it is read-only, its folder is not
    ///   writable, or it holds something that is not a todo list of this version.
    public func save(_ list: TodoList) throws(TodoFileError) {
        try withFolderLocked { () throws(TodoFileError) in
            try checkWritable()
            if let data = try read() {
                _ = try existingList(in: data) { .notATodoList(path: path, found: $0) }
            }
            try write(list)
        }
    }

    /// Writes `list` to a new file: the path must be free, and nothing there is ever overwritten, even
    /// when another program creates a file at the same moment (the file is created exclusively first).
    ///
    /// - Throws: ``TodoFileError/alreadyExists(path:)`` when something is at the path, or why the file
    ///   could not be written (then no file is left behind).
    public func saveNew(_ list: TodoList) throws(TodoFileError) {
        try withFolderLocked { () throws(TodoFileError) in
            var status = stat()
            if lstat(path, &status) == 0 { throw .alreadyExists(path: path) }
            try checkWritable()
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard descriptor >= 0 else {
                if errno == EEXIST { throw .alreadyExists(path: path) }
                throw .folderUnwritable(path: path, folder: folder, reason: Self.lastError())
            }
            close(descriptor)
            do throws(TodoFileError) {
                try write(list)
            } catch {
                unlink(path)
                throw error
            }
        }
    }

    /// Writes `list` unless another program changed the file since this one last read or wrote it; then
    /// merges the two first (see ``TodoMerge``) and writes the merged list.
    ///
    /// ```swift
    /// import Foundation
    ///
    /// let file = TodoFile(path: NSTemporaryDirectory() + "todo-\(UUID().uuidString).json")
    /// let start = TodoList(titles: ["milk"])
    /// try file.save(start)
    /// var theirs = start
    /// TodoAction.add("eggs").reduce(&theirs)
    /// _ = try file.update(to: theirs, from: start)      // another todo adds "eggs"
    /// var ours = start
    /// TodoAction.toggle(id: 1).reduce(&ours)
    /// if case .merged(let merge) = try file.update(to: ours, from: start) {
    ///     print(merge.list.items.map { "\($0.title) \($0.isDone)" })
    /// }
    /// // Prints "[\"milk true\", \"eggs false\"]"
    /// ```
    ///
    /// - Parameters:
    ///   - list: The list to save.
    ///   - known: The list the file held when this program last read or wrote it (`nil`: there was no
    ///     file). A file that was removed since is written again. The merge matches items by identity,
    ///     so it assumes the file still descends from `known` (another `todo` on the same list).
    /// - Throws: ``TodoFileError``, with the file untouched, when it is read-only, its folder is not
    ///   writable, or it now holds something that is not a todo list of this version.
    public func update(to list: TodoList, from known: TodoList?) throws(TodoFileError) -> SaveResult {
        try withFolderLocked { () throws(TodoFileError) -> SaveResult in
            try checkWritable()
            guard let data = try read() else {
                try write(list)
                return .saved
            }
            if let known, data == lastWrite.bytes(for: known) {
                guard list != known else { return .unchanged }
                try write(list)
                return .saved
            }
            let theirs = try existingList(in: data) { .replaced(path: path, found: $0) } ?? known ?? TodoList()
            if theirs == list { return .unchanged }
            let merge = TodoMerge(base: known ?? TodoList(), ours: list, theirs: theirs)
            try write(merge.list)
            return merge.list == list && merge.conflicts.isEmpty ? .saved : .merged(merge)
        }
    }

    // MARK: Reading and writing

    /// The list `data` holds (`nil` for an empty file), or the error for what it holds instead, with
    /// `notAList` naming a file that is not a todo list at all.
    private func existingList(
        in data: Data, notAList: (String) -> TodoFileError
    ) throws(TodoFileError) -> TodoList? {
        switch TodoFormat.parse(data) {
        case .empty: return nil
        case .list(let list): return list
        case .notATodoList(let found): throw notAList(found)
        case .damaged(let reason): throw .damaged(path: path, reason: reason)
        case .badIdentity(let detail): throw .badIdentity(path: path, detail: detail)
        case .newerVersion(let version): throw .newerVersion(path: path, version: version)
        }
    }

    /// The file's bytes, or `nil` when there is no file.
    private func read() throws(TodoFileError) -> Data? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw .unreadable(path: path, reason: Self.lastError())
        }
        if status.st_mode & S_IFMT == S_IFDIR { throw .isFolder(path: path) }
        if status.st_mode & S_IFMT != S_IFREG { throw .notAFile(path: path) }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: (error as NSError).localizedFailureReason ?? "\(error.localizedDescription)")
        }
    }

    /// Refuses a file or folder without write permission (checked on the mode bits too, so that the
    /// program running as root still respects a file its user made read-only).
    private func checkWritable() throws(TodoFileError) {
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFDIR,
           status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o222 == 0 || access(path, W_OK) != 0 {
            throw .readOnly(path: path)
        }
        guard stat(folder, &status) == 0 else { throw .folderMissing(path: path, folder: folder) }
        if access(folder, W_OK) != 0 {
            throw .folderUnwritable(path: path, folder: folder, reason: Self.lastError())
        }
        if status.st_mode & 0o222 == 0 {
            throw .folderUnwritable(path: path, folder: folder, reason: "no one may write in it")
        }
    }

    /// Writes `list` atomically (temporary file, flush, rename) and remembers its bytes. A file that
    /// already exists keeps its permissions; a new one is readable and writable by its owner only.
    private func write(_ list: TodoList) throws(TodoFileError) {
        let data = lastWrite.encode(list)
        let name = (path as NSString).lastPathComponent
        let temporary = (folder as NSString).appendingPathComponent(
            ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        var status = stat()
        let exists = stat(path, &status) == 0
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, exists ? status.st_mode & 0o7777 : 0o600)
        guard descriptor >= 0 else {
            throw .folderUnwritable(path: path, folder: folder, reason: Self.lastError())
        }
        var failure: String?
        // Root saving over a user's file gives the new file that user's owner and group.
        if exists, geteuid() == 0, fchown(descriptor, status.st_uid, status.st_gid) != 0 { failure = Self.lastError() }
        if !data.withUnsafeBytes({ writeFully(descriptor, $0) }) { failure = Self.lastError() }
        if failure == nil, fsync(descriptor) != 0 { failure = Self.lastError() }
        if close(descriptor) != 0, failure == nil { failure = Self.lastError() }
        if failure == nil, rename(temporary, path) != 0 { failure = Self.lastError() }
        if let failure {
            unlink(temporary)
            throw .unwritable(path: path, reason: failure)
        }
        lastWrite.remember(list, data)
    }

    /// Runs `body` while holding an exclusive advisory lock on the folder, so that the saves of all
    /// `todo`s in it take turns. A folder that cannot be opened runs `body` unlocked (it will report why
    /// the folder is unusable).
    private func withFolderLocked<Result>(_ body: () throws(TodoFileError) -> Result) throws(TodoFileError) -> Result {
        let descriptor = open(folder, O_RDONLY)
        guard descriptor >= 0 else { return try body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private func isFolder(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }

    // MARK: Setting a damaged file aside

    private func setAside(now: Date) throws(TodoFileError) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let base = "\(path).corrupt-\(formatter.string(from: now))"
        var candidate = base
        var attempt = 1
        // A hard link never replaces an existing name (unlike rename), so an earlier set-aside file with
        // the same name is never lost; the list's own name goes only once the copy's name exists.
        while link(path, candidate) != 0 {
            guard errno == EEXIST else { throw .cannotSetAside(path: path, reason: Self.lastError()) }
            attempt += 1
            candidate = "\(base)-\(attempt)"
        }
        guard unlink(path) == 0 else {
            let reason = Self.lastError()
            unlink(candidate)
            throw .cannotSetAside(path: path, reason: reason)
        }
        return candidate
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}

/// Writes all of `bytes` to `descriptor`, retrying after interruptions and short writes.
///
/// - Returns: `true` when every byte was written; `false` on an error, with `errno` telling which.
public func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += written
    }
    return true
}

/// Why a ``TodoFile`` could not be used. The ``description`` names the file (or folder), what was
/// wrong, and what to do; in every case the file was left as it was.
public enum TodoFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The folder the file would be in does not exist.
    case folderMissing(path: String, folder: String)
    /// The path names a folder, not a file.
    case isFolder(path: String)
    /// The path names something that is not a regular file (a device, a pipe, a socket).
    case notAFile(path: String)
    /// The file is a damaged todo list, found where a list was to be saved: it is not overwritten.
    case damaged(path: String, reason: String)
    /// The file exists but cannot be read (no permission, say).
    case unreadable(path: String, reason: String)
    /// The file is not this program's list: `found` says what it is instead.
    case notATodoList(path: String, found: String)
    /// The file was written by a later version of `todo`.
    case newerVersion(path: String, version: Int)
    /// The file holds an identity outside ``TodoList/identities``: `detail` says which.
    case badIdentity(path: String, detail: String)
    /// The file is a damaged todo list and could not be renamed out of the way.
    case cannotSetAside(path: String, reason: String)
    /// The list file is read-only.
    case readOnly(path: String)
    /// No file can be created in the folder (no permission, a read-only disk).
    case folderUnwritable(path: String, folder: String, reason: String)
    /// Since it was loaded, the file was replaced by something that is not a todo list of this version.
    case replaced(path: String, found: String)
    /// Something is at the path already, and saving to a new file never overwrites.
    case alreadyExists(path: String)
    /// Writing the list failed after it had begun (a full disk, say).
    case unwritable(path: String, reason: String)

    /// One line saying what went wrong with which file, and what to do.
    public var description: String {
        switch self {
        case .folderMissing(let path, let folder):
            "cannot keep the list in \(path): the folder \(folder) does not exist"
        case .isFolder(let path):
            "\(path) is a directory, not a file; give --file a file in it, like \((path as NSString).appendingPathComponent("todo.json"))"
        case .notAFile(let path):
            "\(path) is not a regular file (a device, a pipe or a socket); give --file a file"
        case .damaged(let path, let reason):
            "\(path) is a damaged todo list (\(reason)); it was not overwritten — move it away, or save elsewhere"
        case .unreadable(let path, let reason):
            "cannot read \(path): \(reason)"
        case .notATodoList(let path, let found):
            "\(path) is not a todo list: expected a JSON object with \"format\": \"\(TodoFormat.marker)\", found \(found); it was left untouched — use --file to choose another file"
        case .newerVersion(let path, let version):
            "\(path) was written by a newer todo (format version \(version)); it was left untouched — use --file to choose another file"
        case .badIdentity(let path, let detail):
            "\(path) cannot be read as a todo list: \(detail); it was left untouched — correct it by hand or use --file"
        case .cannotSetAside(let path, let reason):
            "\(path) is a damaged todo list, and renaming it out of the way failed (\(reason)); it was left untouched — move it yourself or use --file"
        case .readOnly(let path):
            "\(path) is read-only, so nothing was written; the changes are only in memory"
        case .folderUnwritable(_, let folder, let reason):
            "cannot save in the folder \(folder) (\(reason)), so nothing was written; the changes are only in memory"
        case .replaced(let path, let found):
            "\(path) was replaced by another program with \(found); it was not overwritten, and the changes are only in memory"
        case .alreadyExists(let path):
            "\(path) exists already; choose a new name (todo never saves over another file)"
        case .unwritable(let path, let reason):
            "cannot write \(path): \(reason); the file was left as it was"
        }
    }
}

/// The last list a ``TodoFile`` wrote, with its bytes and each item's text (shared by copies of the
/// value, safe from any thread).
private final class LastWrite: Sendable {
    private struct Written {
        var list: TodoList?
        var bytes = Data()
        var fragments: [TodoItem: [UInt8]] = [:]
    }

    private let written = Mutex(Written())

    /// `list`'s bytes: remembered when it is the list last written, encoded otherwise.
    ///
    /// - Complexity: O(n) to compare the lists; encoding only when they differ.
    func bytes(for list: TodoList) -> Data {
        written.withLock { $0.list == list ? $0.bytes : nil } ?? TodoFormat.encode(list)
    }

    /// `list`'s bytes, reusing the text of the items that the last encoded list had too.
    func encode(_ list: TodoList) -> Data {
        written.withLock { written in TodoFormat.encode(list, reusing: &written.fragments) }
    }

    func remember(_ list: TodoList, _ bytes: Data) {
        written.withLock { written in
            written.list = list
            written.bytes = bytes
        }
    }
}
