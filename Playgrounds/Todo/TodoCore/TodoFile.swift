import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The JSON file a todo list is kept in: read once at start, written after every change.
///
/// Writes are atomic: the list is written to a temporary file in the same folder, flushed to disk, and
/// renamed over the old file, so a crash mid-write leaves either the old list or the new one, never half
/// of one. A file that cannot be read as a todo list is never overwritten: ``load(now:)`` renames it to
/// `PATH.corrupt-<time>` and says so.
///
/// The format (pretty-printed, keys sorted):
/// ```json
/// { "format" : "stillwater-todo", "version" : 1, "nextID" : 3,
///   "items" : [ { "done" : false, "id" : 1, "title" : "milk" } ] }
/// ```
///
/// ```swift
/// let file = TodoFile(path: "/tmp/todo-example.json")
/// try file.save(TodoList(titles: ["milk"]))
/// if case .loaded(let list) = try file.load() { print(list.items.map(\.title)) }
/// // Prints "["milk"]"
/// ```
///
/// - Note: Two `todo` processes on one file do not see each other's changes; the last one to save wins.
public struct TodoFile: Sendable {
    /// The current format version; files of a later version are refused, not set aside.
    public static let version = 1

    /// The file's path, with symbolic links resolved (so saving replaces the file a link points to, not
    /// the link).
    public let path: String

    /// The file at `path` (relative paths are relative to the current directory).
    public init(path: String) {
        let url = URL(fileURLWithPath: path)
        self.path = url.resolvingSymlinksInPath().path
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
        /// The file held this list.
        case loaded(TodoList)
        /// The file was not a todo list: it was renamed to `movedTo`, and the list starts empty.
        /// `reason` says what was wrong with it.
        case setAside(reason: String, movedTo: String)

        /// The list to start with: the loaded one, or an empty one.
        public var list: TodoList {
            if case .loaded(let list) = self { return list }
            return TodoList()
        }
    }

    /// Reads the list.
    ///
    /// A file that exists but is not a todo list (not JSON, the wrong shape, duplicate identities) is
    /// renamed to `PATH.corrupt-<now, as yyyyMMdd-HHmmss>` (with `-2`, `-3`… if that exists too) and
    /// reported as ``LoadResult/setAside(reason:movedTo:)``. An empty file (zero bytes or only
    /// whitespace) holds nothing to lose and loads as an empty list. Titles are cleaned as
    /// ``TodoItem/cleanTitle(_:)`` cleans typed ones (an empty one reads `(untitled)`), and a `nextID`
    /// that is missing or too small is raised past the largest identity.
    ///
    /// - Parameter now: The time used in the name of a set-aside file.
    /// - Throws: ``TodoFileError`` when the file cannot be read at all (a folder, no permission), when it
    ///   was written by a later version of `todo`, or when a corrupt file cannot be renamed. The file is
    ///   left as it is in each case.
    public func load(now: Date = Date()) throws(TodoFileError) -> LoadResult {
        guard FileManager.default.fileExists(atPath: path) else {
            let folder = (path as NSString).deletingLastPathComponent
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                throw .folderMissing(path: path, folder: folder)
            }
            return .missing
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: Self.describe(error))
        }
        switch Self.decode(data) {
        case .success(let list):
            return .loaded(list)
        case .failure(.newerVersion(let version)):
            throw .newerVersion(path: path, version: version)
        case .failure(.invalid(let reason)):
            let aside = try setAside(now: now)
            return .setAside(reason: reason, movedTo: aside)
        }
    }

    /// Writes `list` atomically (temporary file, flush, rename). A file that already exists keeps its
    /// permissions; a new one is readable and writable by its owner only.
    ///
    /// - Throws: ``TodoFileError/unwritable(path:reason:)``; the old file is untouched then, and the
    ///   temporary file removed.
    public func save(_ list: TodoList) throws(TodoFileError) {
        let data = Self.encode(list)
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = (folder as NSString).appendingPathComponent(
            ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        var status = stat()
        let mode = stat(path, &status) == 0 ? status.st_mode & 0o7777 : 0o600
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard descriptor >= 0 else { throw .unwritable(path: path, reason: Self.lastError()) }
        var failure: String?
        if !data.withUnsafeBytes({ writeFully(descriptor, $0) }) { failure = Self.lastError() }
        if failure == nil, fsync(descriptor) != 0 { failure = Self.lastError() }
        if close(descriptor) != 0, failure == nil { failure = Self.lastError() }
        if failure == nil, rename(temporary, path) != 0 { failure = Self.lastError() }
        if let failure {
            unlink(temporary)
            throw .unwritable(path: path, reason: failure)
        }
    }

    // MARK: The format

    private struct Document: Codable {
        var format: String?
        var version: Int
        var nextID: Int?
        var items: [TodoItem]
    }

    private enum DecodeFailure: Error {
        case invalid(String)
        case newerVersion(Int)
    }

    /// The file's bytes for `list`.
    static func encode(_ list: TodoList) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let document = Document(format: "stillwater-todo", version: version, nextID: list.nextID, items: list.items)
        // Encoding strings, numbers and booleans cannot fail.
        return try! encoder.encode(document) + Data("\n".utf8)
    }

    /// The list in `data`, or why it is not one.
    private static func decode(_ data: Data) -> Result<TodoList, DecodeFailure> {
        if data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) { return .success(TodoList()) }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch {
            return .failure(.invalid(describe(error)))
        }
        if document.version > version { return .failure(.newerVersion(document.version)) }
        if document.version < 1 { return .failure(.invalid("unknown format version \(document.version)")) }
        var seen = Set<Int>()
        for item in document.items where !seen.insert(item.id).inserted {
            return .failure(.invalid("two items have the identity \(item.id)"))
        }
        let items = document.items.map { item in
            let title = TodoItem.cleanTitle(item.title)
            return TodoItem(id: item.id, title: title.isEmpty ? "(untitled)" : title, isDone: item.isDone)
        }
        return .success(TodoList(items: items, nextID: document.nextID))
    }

    // MARK: Setting a corrupt file aside

    private func setAside(now: Date) throws(TodoFileError) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let base = "\(path).corrupt-\(formatter.string(from: now))"
        var candidate = base
        var attempt = 1
        while FileManager.default.fileExists(atPath: candidate) {
            attempt += 1
            candidate = "\(base)-\(attempt)"
        }
        guard rename(path, candidate) == 0 else {
            throw .cannotSetAside(path: path, reason: Self.lastError())
        }
        return candidate
    }

    // MARK: Messages

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }

    /// A decoding error as one line: what was wrong, and where.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            return "not valid JSON" + location(context)
        case DecodingError.keyNotFound(let key, let context):
            return "missing \"\(key.stringValue)\"" + location(context)
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return context.debugDescription.trimmingWhitespace() + location(context)
        default:
            return error.localizedDescription
        }
    }

    private static func location(_ context: DecodingError.Context) -> String {
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? "" : " at \(path)"
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

/// Why a ``TodoFile`` could not be used. The ``description`` names the file and what to do.
public enum TodoFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The folder the file would be in does not exist.
    case folderMissing(path: String, folder: String)
    /// The file exists but cannot be read (a folder, no permission).
    case unreadable(path: String, reason: String)
    /// The file was written by a later version of `todo`.
    case newerVersion(path: String, version: Int)
    /// The file is not a todo list and could not be renamed out of the way.
    case cannotSetAside(path: String, reason: String)
    /// The list could not be written.
    case unwritable(path: String, reason: String)

    /// One line saying what went wrong with which file.
    public var description: String {
        switch self {
        case .folderMissing(let path, let folder):
            "cannot keep the list in \(path): the folder \(folder) does not exist"
        case .unreadable(let path, let reason):
            "cannot read \(path): \(reason)"
        case .newerVersion(let path, let version):
            "\(path) was written by a newer todo (format version \(version)); it was left untouched — use --file to choose another file"
        case .cannotSetAside(let path, let reason):
            "\(path) is not a todo list, and renaming it out of the way failed (\(reason)); it was left untouched — move it yourself or use --file"
        case .unwritable(let path, let reason):
            "cannot write \(path): \(reason)"
        }
    }
}
