/// The CRC-32 of IEEE 802.3 (the checksum of zip, gzip and PNG), table-driven: polynomial 0x04C11DB7
/// in its reflected form 0xEDB88320, starting from all ones and inverted at the end.
///
/// `CRC32.checksum(Array("123456789".utf8))` is `0xCBF43926`, the standard check value.
struct CRC32 {
    /// The running remainder, before the final inversion.
    private var remainder: UInt32 = 0xFFFF_FFFF

    /// A checksum of nothing yet.
    init() {}

    /// The checksum of the bytes added so far.
    var value: UInt32 { ~remainder }

    /// Adds `bytes` to the checksum.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = remainder
        Self.table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8)
            }
        }
        remainder = crc
    }

    /// Adds `bytes` to the checksum.
    mutating func update(_ bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    /// The remainder of each byte value: entry `n` is `n` divided by the polynomial, eight steps.
    private static let table: [UInt32] = (0..<256).map { index in
        var entry = UInt32(index)
        for _ in 0..<8 {
            entry = entry & 1 == 1 ? (entry >> 1) ^ 0xEDB8_8320 : entry >> 1
        }
        return entry
    }
}
