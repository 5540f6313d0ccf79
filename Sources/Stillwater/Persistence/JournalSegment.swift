/// Reading and writing a segment's records and commit marks: pure functions of bytes, like the rest of
/// ``JournalFormat``. `Internal/README.md`, "Persistence", says why a commit mark tells a torn write from
/// damage.
extension JournalFormat {
    /// One whole record found in a segment.
    struct Frame {
        /// The version it holds.
        var version: Int
        /// Where its header starts.
        var offset: Int
        /// Where its payload lies in the segment's bytes; its end is the record's end.
        var payload: Range<Int>
    }

    /// What a segment's bytes hold.
    struct SegmentScan {
        /// Whether the segment has commit marks (``segmentMagic``) or not (``firstFormatMagic``).
        var hasCommitMarks: Bool
        /// The records that count: in a segment with commit marks, those of the batches whose marks
        /// are valid; in one of the first format, every whole record before the first bad one.
        var frames: [Frame] = []
        /// Where those records (and their marks) end: the length a torn segment is cut back to.
        var end: Int
        /// The chained checksum of the last valid commit mark (the segment's seed before any).
        var chain: UInt32
        /// Why reading stopped before the end of the bytes, if it did.
        var stop: Stop?
    }

    /// Where and why a scan stopped, and whether what follows proves the bytes there were synced.
    struct Stop {
        /// Where the first bad or unfinished byte is: a record or mark that is cut short or fails its
        /// check, or, with nothing bad, the first record after the last commit mark.
        var offset: Int
        /// What is wrong there, in words.
        var problem: String
        /// Why this cannot be a torn write, when it cannot: a valid commit mark later in the segment,
        /// or a batch whose commit mark was written. `nil` for a torn write (or a segment without marks).
        var proof: String?
    }

    // MARK: Writing

    /// The checksum a segment's commit marks chain from: the CRC-32 of the magic and the version in the
    /// segment's name, so a segment renamed to another version fails its first mark.
    static func chainSeed(first: Int) -> UInt32 {
        var crc = CRC32()
        crc.update(segmentMagic)
        crc.update(littleEndianBytes(UInt64(first)))
        return crc.value
    }

    /// The chained checksum of a commit mark: the CRC-32 of the previous mark's checksum (or the seed),
    /// every byte of the batch's records, and the batch's last version.
    static func chain(after previous: UInt32, batch: some Collection<UInt8>, lastVersion: UInt64) -> UInt32 {
        var crc = CRC32()
        crc.update(littleEndianBytes(previous))
        crc.update(batch)
        crc.update(littleEndianBytes(lastVersion))
        return crc.value
    }

    /// Appends the commit mark of the batch `buffer` holds (every byte of it, records only) and
    /// returns the mark's checksum, which the next batch's mark chains from.
    static func appendCommitMark(after previous: UInt32, lastVersion: Int, to buffer: inout [UInt8]) -> UInt32 {
        let value = chain(after: previous, batch: buffer, lastVersion: UInt64(lastVersion))
        buffer.append(contentsOf: littleEndianBytes(commitTag))
        buffer.append(contentsOf: littleEndianBytes(value))
        buffer.append(contentsOf: littleEndianBytes(UInt64(lastVersion)))
        return value
    }

    // MARK: Reading

    /// Reads a segment. Never traps, whatever `bytes` hold.
    ///
    /// - Parameter first: The version in the segment's name.
    /// - Returns: `nil` when `bytes` start with neither magic (not a segment at all).
    static func scanSegment(_ bytes: [UInt8], first: Int) -> SegmentScan? {
        if bytes.starts(with: segmentMagic) { return scanCommitted(bytes, first: first) }
        if bytes.starts(with: firstFormatMagic) { return scanFirstFormat(bytes) }
        return nil
    }

    /// A segment of the first format: every whole record until the first bad one.
    private static func scanFirstFormat(_ bytes: [UInt8]) -> SegmentScan {
        var scan = SegmentScan(hasCommitMarks: false, end: bytes.count, chain: 0)
        var offset = firstFormatMagic.count
        while offset < bytes.count {
            switch readRecord(bytes, at: offset) {
            case .success(let frame):
                scan.frames.append(frame)
                offset = frame.payload.upperBound
            case .failure(let problem):
                scan.stop = Stop(offset: offset, problem: problem.text)
                scan.end = offset
                return scan
            }
        }
        return scan
    }

    /// A segment with commit marks: the batches up to the last valid mark, and, when bytes follow it,
    /// whether they are a torn write or damage.
    private static func scanCommitted(_ bytes: [UInt8], first: Int) -> SegmentScan {
        var scan = SegmentScan(hasCommitMarks: true, end: segmentMagic.count, chain: chainSeed(first: first))
        var batch: [Frame] = []
        var offset = scan.end
        var stop: (offset: Int, problem: String)?
        reading: while offset < bytes.count {
            guard bytes.count - offset >= 4, readUInt32(bytes, at: offset) == commitTag else {
                switch readRecord(bytes, at: offset) {
                case .success(let frame):
                    batch.append(frame)
                    offset = frame.payload.upperBound
                    continue reading
                case .failure(let problem):
                    stop = (offset, problem.text)
                    break reading
                }
            }
            guard bytes.count - offset >= commitMarkSize else {
                stop = (offset, "an incomplete commit mark (\(bytes.count - offset) of \(commitMarkSize) bytes)")
                break
            }
            let version = readUInt64(bytes, at: offset + 8)
            guard let last = batch.last, UInt64(last.version) == version else {
                let ending = batch.last.map { "a batch ending at version \($0.version)" } ?? "no record"
                stop = (offset, "a commit mark of version \(version) after \(ending)")
                break
            }
            let stored = readUInt32(bytes, at: offset + 4)
            let computed = chain(after: scan.chain, batch: bytes[scan.end..<offset], lastVersion: version)
            guard stored == computed else {
                stop = (offset, "a commit mark whose checksum does not match (stored \(hex(stored)), computed \(hex(computed)))")
                break
            }
            scan.frames += batch
            batch.removeAll()
            scan.chain = stored
            offset += commitMarkSize
            scan.end = offset
        }
        if stop == nil, scan.end < bytes.count {
            stop = (scan.end, "\(batch.count) whole records after the last commit mark, without a mark of their own")
        }
        if let stop {
            scan.stop = Stop(offset: stop.offset, problem: stop.problem, proof: proofOfSync(bytes, after: scan))
        }
        return scan
    }

    /// Why the bytes after the last valid commit mark (at `scan.end`) were synced, if something shows
    /// they were, so that a bad byte among them is damage and not a torn write.
    ///
    /// A write the program was making when it stopped leaves a prefix of its bytes, some of which may
    /// read as zeros; it never leaves a commit mark that checks out after a bad byte, and never a whole
    /// mark at the end of a batch it did not finish writing. So:
    /// - a later mark that checks out against the mark-shaped bytes before it proves that batches were
    ///   written after the bad byte, each synced before the next began;
    /// - a segment that ends in a commit mark (its tag and a version, or whole records followed by 16
    ///   bytes that end in the last record's version) shows the batch was written to its end, so it may
    ///   have been acknowledged. (On a file system that writes an append's pages out of order, a crash during a
    ///   flush can leave such a batch with a hole before its mark: reported as damage too, never cut.)
    private static func proofOfSync(_ bytes: [UInt8], after scan: SegmentScan) -> String? {
        var previous: (chain: UInt32, end: Int)?
        var offset = scan.end
        while offset + commitMarkSize <= bytes.count {
            if bytes[offset] == 0xFF, readUInt32(bytes, at: offset) == commitTag {
                let stored = readUInt32(bytes, at: offset + 4)
                if let previous, previous.end <= offset,
                   chain(after: previous.chain, batch: bytes[previous.end..<offset], lastVersion: readUInt64(bytes, at: offset + 8)) == stored {
                    return "a valid commit mark follows at offset \(offset)"
                }
                previous = (stored, offset + commitMarkSize)
            }
            offset += 1
        }
        let markStart = bytes.count - commitMarkSize
        guard markStart - scan.end >= recordHeaderSize else { return nil }
        // A mark the crash cut short reads as zeros from the cut on, so its version is 0 (or the whole
        // mark was written): only a mark with a version tells that its batch was written to the end.
        if readUInt32(bytes, at: markStart) == commitTag, readUInt64(bytes, at: markStart + 8) != 0 {
            return "the segment ends in the batch's commit mark, so the batch was written whole"
        }
        var record = scan.end
        var lastVersion: Int?
        while record < markStart, case .success(let frame) = readRecord(bytes, at: record) {
            record = frame.payload.upperBound
            lastVersion = frame.version
        }
        if record == markStart, let lastVersion, readUInt64(bytes, at: markStart + 8) == UInt64(lastVersion) {
            return "the batch's records are whole and followed by its commit mark, whose tag is damaged"
        }
        return nil
    }

    /// Why a record cannot be read.
    struct RecordProblem: Error {
        var text: String
    }

    /// The record at `offset`, or why there is no whole, valid one there.
    static func readRecord(_ bytes: [UInt8], at offset: Int) -> Result<Frame, RecordProblem> {
        let remaining = bytes.count - offset
        guard remaining >= recordHeaderSize else {
            return .failure(RecordProblem(text: "an incomplete record header (\(remaining) of \(recordHeaderSize) bytes)"))
        }
        let length = Int(readUInt32(bytes, at: offset))
        guard length <= maxPayload else {
            return .failure(RecordProblem(text: "a record length of \(length) bytes, more than the \(maxPayload) a record may hold"))
        }
        let payloadStart = offset + recordHeaderSize
        guard length <= bytes.count - payloadStart else {
            return .failure(RecordProblem(text: "an incomplete record (\(bytes.count - payloadStart) of \(length) payload bytes)"))
        }
        let stored = readUInt32(bytes, at: offset + 4)
        let computed = CRC32.checksum(bytes[(offset + 8)..<(payloadStart + length)])
        guard computed == stored, let version = Int(exactly: readUInt64(bytes, at: offset + 8)) else {
            return .failure(RecordProblem(text: "a record whose checksum does not match (stored \(hex(stored)), computed \(hex(computed)))"))
        }
        return .success(Frame(version: version, offset: offset, payload: payloadStart..<(payloadStart + length)))
    }
}
