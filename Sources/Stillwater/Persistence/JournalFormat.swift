/// The bytes of a ``FileJournal``'s files: file names, records, segments and snapshots. Pure functions
/// of bytes; `FileJournal` does the reading, writing and deciding. The format is described in
/// `FileJournal`'s documentation and in `Internal/README.md`, "Persistence".
enum JournalFormat {
    /// The first eight bytes of every segment written now: records in batches, each batch ended by a
    /// commit mark.
    static let segmentMagic = Array("SWJRNL02".utf8)
    /// The first eight bytes of a segment of the first format: records only, no commit marks. Still
    /// read; never written.
    static let firstFormatMagic = Array("SWJRNL01".utf8)
    /// The first four bytes of a commit mark, where a record has its length (which is never this large).
    static let commitTag: UInt32 = 0xFFFF_FFFF
    /// A commit mark's size: tag (4 bytes), chained CRC-32 (4), the batch's last version (8).
    static let commitMarkSize = 16
    /// A record's header: payload length (4 bytes), CRC-32 (4), version (8), all little-endian.
    static let recordHeaderSize = 16
    /// The largest payload a record may hold, so that a damaged length never asks for gigabytes.
    static let maxPayload = 16 << 20
    /// The first word of a snapshot's header line.
    static let snapshotMagic = "SWSNAP01"
    /// A snapshot's header line: magic, version (20 digits), JSON length (20 digits), CRC-32 of the
    /// JSON (8 lower-case hex digits), separated by single spaces, ending in a line feed.
    static let snapshotHeaderSize = 8 + 1 + 20 + 1 + 20 + 1 + 8 + 1

    // MARK: File names

    /// `journal-<first version, 20 digits>.log`.
    static func segmentName(first version: Int) -> String {
        "journal-\(padded(version)).log"
    }

    /// `snapshot-<version, 20 digits>.json`.
    static func snapshotName(version: Int) -> String {
        "snapshot-\(padded(version)).json"
    }

    /// The version in a segment's file name, or `nil` for any other name.
    static func segmentVersion(_ name: String) -> Int? {
        version(in: name, prefix: "journal-", suffix: ".log")
    }

    /// The version in a snapshot's file name, or `nil` for any other name.
    static func snapshotVersion(_ name: String) -> Int? {
        version(in: name, prefix: "snapshot-", suffix: ".json")
    }

    private static func version(in name: String, prefix: String, suffix: String) -> Int? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard digits.count == 20, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let version = Int(digits), version <= maxVersion
        else { return nil }
        return version
    }

    /// The largest version a file name may hold: far beyond any journal, and far enough below `Int.max`
    /// that counting on from it never overflows, whatever the files hold.
    static let maxVersion = Int.max / 2

    /// `value` in decimal, zero-padded to 20 digits (every non-negative `Int` fits).
    static func padded(_ value: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }

    // MARK: Records

    /// Appends the record of `payload` at `version` to `buffer`.
    static func appendRecord(version: Int, payload: some Collection<UInt8>, to buffer: inout [UInt8]) {
        let versionBytes = littleEndianBytes(UInt64(version))
        var crc = CRC32()
        crc.update(versionBytes)
        crc.update(payload)
        buffer.append(contentsOf: littleEndianBytes(UInt32(payload.count)))
        buffer.append(contentsOf: littleEndianBytes(crc.value))
        buffer.append(contentsOf: versionBytes)
        buffer.append(contentsOf: payload)
    }

    // MARK: Snapshots

    /// A snapshot file: the header line, then `json`.
    static func snapshotFile(version: Int, json: some Collection<UInt8>) -> [UInt8] {
        let header = "\(snapshotMagic) \(padded(version)) \(padded(json.count)) \(hex(CRC32.checksum(json)))\n"
        return Array(header.utf8) + json
    }

    /// Where the JSON of a snapshot file lies, or why the file is not a whole snapshot at `version`.
    static func snapshotJSON(in bytes: [UInt8], version: Int) -> Result<Range<Int>, SnapshotDamage> {
        guard bytes.count >= snapshotHeaderSize,
              let header = String(validating: bytes[0..<snapshotHeaderSize], as: UTF8.self)
        else { return .failure(SnapshotDamage(reason: "no snapshot header line")) }
        let fields = header.dropLast().split(separator: " ", omittingEmptySubsequences: false)
        guard header.last == "\n", fields.count == 4, fields[0] == snapshotMagic,
              let headerVersion = Int(fields[1]), let length = Int(fields[2]), let stored = UInt32(fields[3], radix: 16)
        else { return .failure(SnapshotDamage(reason: "no snapshot header line")) }
        guard headerVersion == version else {
            return .failure(SnapshotDamage(reason: "its header says version \(headerVersion)"))
        }
        let json = snapshotHeaderSize..<bytes.count
        guard json.count == length else {
            return .failure(SnapshotDamage(reason: "\(json.count) bytes of JSON where the header says \(length)"))
        }
        let computed = CRC32.checksum(bytes[json])
        guard computed == stored else {
            return .failure(SnapshotDamage(reason: "checksum does not match (stored \(hex(stored)), computed \(hex(computed)))"))
        }
        return .success(json)
    }

    /// Why a snapshot file cannot be used.
    struct SnapshotDamage: Error {
        var reason: String
    }

    // MARK: Bytes

    /// `value`'s bytes, least significant first.
    static func littleEndianBytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << ($1 * 8) }
    }

    static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << ($1 * 8) }
    }

    /// `value` as eight lower-case hex digits.
    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
