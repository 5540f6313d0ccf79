/// Why a journal could not be opened, read or written, in one line that names the file and, where it
/// matters, the byte offset.
///
/// ``FileJournal`` throws it; a journal of your own may too. Its ``description`` is meant for a log or
/// a terminal as it is:
///
/// ```swift
/// let error = JournalError(.corrupt, path: "/var/board/journal-00000000000000000001.log", offset: 4096,
///                          reason: "bad checksum")
/// print(error)
/// // Prints "/var/board/journal-00000000000000000001.log, offset 4096: bad checksum"
/// ```
public struct JournalError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What kind of failure it was: what the caller can do about it depends on this.
    public enum Kind: String, Sendable, Equatable {
        /// Another journal (in this process or another) has the directory open. Stop the other one, or
        /// use another directory.
        case locked
        /// The files hold damage the journal will not repair by itself: a record or commit mark that
        /// fails its check anywhere before the last segment's last commit mark (or in a last batch whose
        /// commit mark was written), versions with a gap, a file that is not a journal file. Only the
        /// unsynced bytes after the last commit mark are a torn write, which a load cuts off. Nothing was
        /// changed; the reason says what and where.
        case corrupt
        /// A file or directory could not be read; the reason holds the system's error text.
        case unreadable
        /// A file or directory could not be written, flushed or renamed (a full disk, missing
        /// permission); the reason holds the system's error text.
        case unwritable
        /// A record or snapshot is intact but does not decode as the journal's type (the type changed
        /// since it was written); the reason names the version.
        case decoding
        /// An action or state could not be encoded, or encodes to more than a record may hold.
        case encoding
        /// The journal refused a write because an earlier write or flush failed: after a failed flush
        /// the system may have dropped the data it was given, and a later flush that succeeds would not
        /// prove otherwise, so the journal writes nothing more until it is reopened (``FileJournal``'s
        /// ``FileJournal/load()`` or ``FileJournal/open()``), which treats what follows the last
        /// completed flush as a torn write. The reason names the failure that stopped it.
        case stopped
    }

    /// What kind of failure it was.
    public var kind: Kind
    /// The file (or directory) concerned.
    public var path: String
    /// Where in the file, in bytes from its start, when a place in it matters.
    public var offset: Int?
    /// What went wrong, in words; for a system call, its error text.
    public var reason: String

    /// Creates an error. Line breaks in `reason` become spaces, so the description stays one line.
    public init(_ kind: Kind, path: String, offset: Int? = nil, reason: String) {
        self.kind = kind
        self.path = path
        self.offset = offset
        self.reason = String(reason.map { $0.isNewline ? " " : $0 })
    }

    /// `path, offset N: reason`, or `path: reason` without an offset.
    public var description: String {
        "\(path)\(offset.map { ", offset \($0)" } ?? ""): \(reason)"
    }
}
