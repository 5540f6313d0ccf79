import Foundation

/// The id a hub gives a client in its welcome, under which the client numbers its commands (`seq`).
///
/// An id names the moment it was issued, in milliseconds since 1970, and 64 random bits:
/// `c` + 12 hexadecimal digits of time, `-`, 16 hexadecimal digits. A client keeps its id for as long as
/// it keeps its queue of commands (across reconnects, reloads and restarts of the server), and sends it
/// in every hello. The time lets a hub tell an id it has forgotten (unseen for longer than
/// ``LiveOptions/clientRetention``) from a new one, so that a forgotten client's retried command is
/// answered `client_expired` instead of being applied again.
///
/// ```swift
/// import StillwaterLive
///
/// let id = LiveClientID(issuedAt: 1_700_000_000_000, random: 0x0123_4567_89ab_cdef)
/// print(id, id.issuedAt, LiveClientID(id.text) == id)
/// // Prints "c018bcfe56800-0123456789abcdef 1700000000000 true"
/// ```
public struct LiveClientID: Hashable, Sendable, Codable, CodingKeyRepresentable, CustomStringConvertible {
    /// When the id was issued, in milliseconds since 1970 (the issuing server's clock).
    public let issuedAt: Int64
    /// The id's random bits.
    public let random: UInt64

    /// The id issued at `issuedAt` (milliseconds since 1970) with these random bits.
    ///
    /// - Precondition: `issuedAt` is from 0 to 16^12 − 1 (the year 10889).
    public init(issuedAt: Int64, random: UInt64) {
        precondition((0..<(1 << 48)).contains(issuedAt),
                     "LiveClientID(issuedAt:): the time must be from 0 to 2^48 - 1 milliseconds; got \(issuedAt)")
        self.issuedAt = issuedAt
        self.random = random
    }

    /// A new id issued at `now`, with random bits from the system's generator.
    public static func issue(now: Date = Date()) -> LiveClientID {
        var generator = SystemRandomNumberGenerator()
        return LiveClientID(issuedAt: LiveClock.milliseconds(now), random: generator.next())
    }

    /// Reads an id a client sent; nil unless it has the form a hub issues (`c`, 12 lowercase hexadecimal
    /// digits, `-`, 16 lowercase hexadecimal digits).
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 30, bytes[0] == UInt8(ascii: "c"), bytes[13] == UInt8(ascii: "-"),
              bytes[1...12].allSatisfy(Self.isHexDigit), bytes[14...].allSatisfy(Self.isHexDigit),
              let time = Int64(String(decoding: bytes[1...12], as: UTF8.self), radix: 16),
              let random = UInt64(String(decoding: bytes[14...], as: UTF8.self), radix: 16)
        else { return nil }
        issuedAt = time
        self.random = random
    }

    /// The id as a client sends it.
    public var text: String { "c" + Self.hex(UInt64(issuedAt), digits: 12) + "-" + Self.hex(random, digits: 16) }

    /// The id's text, as a coding key (a table of clients encodes as an object keyed by id).
    public var codingKey: any CodingKey { AnyKey(text) }

    /// The id a coding key names; nil unless the key's text is an id's.
    public init?<Key: CodingKey>(codingKey: Key) {
        self.init(codingKey.stringValue)
    }

    /// The id's text.
    public var description: String { text }

    /// Decodes the id from its text.
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the text is not an id's.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = LiveClientID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a client id"))
        }
        self = id
    }

    /// Encodes the id as its text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// Wall-clock time as the log keeps it: whole milliseconds since 1970.
enum LiveClock {
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000).rounded(.down))
    }
}

/// What a log remembers of the clients that number their commands: per client, the highest number
/// recorded, the version it made, and when the client was last recorded; and the log's clock.
///
/// Memory is per client, not per command: a retried command is recognised however many commands came
/// after it. A client whose last command is older than ``retention`` (by the log's clock) is forgotten;
/// a command from a forgotten client is refused (`client_expired`), never applied again (see
/// ``isExpired(_:)``).
///
/// Every replica of a log computes the same table from the same entries: the clock is the newest
/// entry's time, and forgetting happens while entries are reduced.
public struct LiveClientTable: Codable, Sendable, Equatable {
    /// What the log remembers of one client.
    public struct Record: Codable, Sendable, Equatable {
        /// The highest command number recorded for the client.
        public var seq: Int
        /// The version that command made (a refused command makes a version too: its number is used).
        public var version: Int
        /// The log's clock when the client's last command was recorded (milliseconds since 1970).
        public var seen: Int64
        /// Why the command numbered ``seq`` was refused, when it was.
        public var refusal: String?

        /// Creates a record.
        public init(seq: Int, version: Int, seen: Int64, refusal: String? = nil) {
            self.seq = seq
            self.version = version
            self.seen = seen
            self.refusal = refusal
        }
    }

    /// How long a client is remembered after its last recorded command, in milliseconds.
    public private(set) var retention: Int64
    /// The log's clock: the newest time of an entry reduced so far (milliseconds since 1970), never
    /// going back.
    public private(set) var clock: Int64
    private var records: [LiveClientID: Record]
    /// The clock at which clients unseen for longer than the retention are next looked for.
    private var nextSweep: Int64

    /// An empty table that remembers a client for `retention` after its last command.
    ///
    /// - Precondition: `retention` is at least one second.
    public init(retention: Duration = LiveOptions.defaultClientRetention) {
        let milliseconds = Self.milliseconds(retention)
        precondition(milliseconds >= 1_000, "LiveClientTable(retention:) must be at least one second; got \(retention)")
        self.retention = milliseconds
        clock = 0
        records = [:]
        nextSweep = 0
    }

    /// What the log remembers of `client`, if anything.
    public subscript(client: LiveClientID) -> Record? { records[client] }

    /// How many clients are remembered.
    public var count: Int { records.count }

    /// How far before the clock an unknown id's issue time must be for the id to count as forgotten:
    /// the retention less a margin for the clocks of the servers that issue ids (an hour, or half the
    /// retention when that is shorter).
    public var expiryHorizon: Int64 { retention - min(retention / 2, 3_600_000) }

    /// Whether a command from `client` must be refused because the log may have forgotten it: the
    /// client is unknown and its id was issued more than ``expiryHorizon`` before the clock. A client
    /// the log forgot was last recorded more than ``retention`` ago, and its id was issued before
    /// that, so it is always expired; a new id is never expired. An id issued long ago that never
    /// recorded a command is refused too: its client starts again with a new id.
    public func isExpired(_ client: LiveClientID) -> Bool {
        records[client] == nil && client.issuedAt < clock - expiryHorizon
    }

    /// Advances the clock to `time` (it never goes back) and forgets the clients unseen for longer than
    /// the retention, looking for them at most every 1/16 of the retention.
    ///
    /// - Complexity: O(1), and O(clients) on the entries that look.
    mutating func advance(to time: Int64) {
        clock = max(clock, time)
        guard clock >= nextSweep else { return }
        let oldest = clock - retention
        records = records.filter { $0.value.seen >= oldest }
        nextSweep = clock + max(retention / 16, 1_000)
    }

    /// Records that `client`'s command `seq` made `version` (refused with `refusal`, or applied).
    mutating func record(_ client: LiveClientID, seq: Int, version: Int, refusal: String?) {
        records[client] = Record(seq: seq, version: version, seen: clock, refusal: refusal)
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
