import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `FileJournal.load()` does: reads the directory, decides what the journal holds, and only when
/// all of it is readable repairs what a crash left (a torn end, a damaged snapshot) and opens the
/// segment to append to. Every decision is made before any file is changed, so a thrown error leaves the
/// files as they were.
struct FileJournalLoader<State: Codable, A: Action & Codable> where A.State == State {
    let files: JournalDirectory
    private let decoder = JSONDecoder()
    /// The time that names the files repairs leave behind.
    private let seconds = Int(Date().timeIntervalSince1970)

    init(files: JournalDirectory) {
        self.files = files
    }

    /// A repair decided while reading, carried out once everything was read.
    enum Repair {
        /// Move a snapshot that failed its check aside.
        case setAside(name: String, reason: String)
        /// Cut the last segment at `offset`, keeping the bytes cut in a file beside it.
        case cut(name: String, offset: Int, bytes: ArraySlice<UInt8>, problem: String)
    }

    /// Everything a load decides from reading, before any file is changed.
    struct Examination {
        /// The newest usable snapshot and the records after it.
        var contents: JournalContents<State, A>
        /// What a load would repair.
        var repairs: [Repair] = []
        /// Damage found: ``JournalError/Kind/corrupt`` or ``JournalError/Kind/decoding``, one per place.
        var damage: [JournalError] = []
        /// The first versions of the segments, ascending.
        var segments: [Int] = []
        /// The versions of the snapshots that pass their checks, ascending.
        var usable: [Int] = []
        /// The last segment, for appending.
        var last = LastSegment(end: 0, length: 0, hasCommitMarks: true, chain: 0)
    }

    /// Reads and checks every file the journal keeps (every segment, every snapshot), and decides what a
    /// load would return and repair. Changes nothing.
    ///
    /// - Throws: Only what stops the reading itself (``JournalError/Kind/unreadable``); damage is listed.
    func examine() throws(JournalError) -> Examination {
        var snapshots: [Int] = []
        var segments: [Int] = []
        for name in try files.names() {
            if let version = JournalFormat.snapshotVersion(name) { snapshots.append(version) }
            if let version = JournalFormat.segmentVersion(name) { segments.append(version) }
        }
        var examination = Examination(contents: JournalContents(), segments: segments.sorted())
        try examineSnapshots(snapshots.sorted(), &examination)
        try examineSegments(&examination)
        return examination
    }

    /// Reads the journal, repairs it, opens its segment, and returns what it holds and the state the
    /// journal continues from.
    func load() throws(JournalError) -> (JournalContents<State, A>, FileJournalState) {
        var examination = try examine()
        if let damage = examination.damage.first { throw damage }
        examination.contents.warnings = try perform(examination.repairs)
        let contents = examination.contents
        let last = examination.last

        var state = FileJournalState()
        state.snapshots = examination.usable
        state.segments = examination.segments
        if let first = state.segments.last, last.end == contents.version, last.hasCommitMarks {
            let file = try files.open(path(of: JournalFormat.segmentName(first: first)), O_WRONLY | O_APPEND)
            state.segment = FileJournalState.Segment(file: file, first: first, length: last.length, chain: last.chain)
        } else {
            // No segment yet, the snapshot is newer than the last record, or the last segment is of the
            // first format: records go on in a new segment (replacing an empty one of the same name).
            let next = contents.version + 1
            state.segment = try FileJournalState.createSegment(first: next, in: files)
            if state.segments.last != next { state.segments.append(next) }
        }
        return (contents, state)
    }

    // MARK: Reading

    /// Checks every snapshot file, newest first: the newest that passes is used; each that fails is to be
    /// set aside (the load then goes on without it: when records it covered are missing, that is
    /// reported as damage, so setting a snapshot aside never loses a record).
    private func examineSnapshots(_ versions: [Int], _ examination: inout Examination) throws(JournalError) {
        for version in versions.reversed() {
            let name = JournalFormat.snapshotName(version: version)
            let bytes = try files.read(path(of: name))
            let json: Range<Int>
            switch JournalFormat.snapshotJSON(in: bytes, version: version) {
            case .failure(let damage):
                examination.repairs.append(.setAside(name: name, reason: damage.reason))
                continue
            case .success(let range):
                json = range
            }
            // Only the snapshot used is decoded; an older one that passes its check is kept as it is.
            guard examination.contents.snapshot == nil else {
                examination.usable.insert(version, at: 0)
                continue
            }
            do {
                let body = try decoder.decode(SnapshotBody<State>.self, from: Data(bytes[json]))
                guard body.version == version else {
                    examination.repairs.append(.setAside(name: name, reason: "its JSON says version \(body.version)"))
                    continue
                }
                examination.contents.snapshot = JournalSnapshot(version: version, state: body.state)
                examination.usable.insert(version, at: 0)
            } catch {
                examination.damage.append(JournalError(
                    .decoding, path: path(of: name),
                    reason: "the snapshot of version \(version) is intact but does not decode as \(State.self): \(error)"))
                return
            }
        }
    }

    /// What appending needs to know of the last segment read.
    struct LastSegment {
        /// The version of its last record that counts.
        var end: Int
        /// Its length once repaired.
        var length: Int
        /// Whether it has commit marks; one of the first format is never appended to.
        var hasCommitMarks: Bool
        /// Its last commit mark's checksum.
        var chain: UInt32
    }

    /// Checks every segment, and reads the records after the snapshot. A torn end of the last segment is
    /// to be cut; damage anywhere is listed, and after the first, segments are still checked but their
    /// records no longer read.
    private func examineSegments(_ examination: inout Examination) throws(JournalError) {
        let segments = examination.segments
        let base = examination.contents.snapshot?.version ?? 0
        var next = base + 1
        for (index, first) in segments.enumerated() {
            let isLast = index == segments.count - 1
            let name = JournalFormat.segmentName(first: first)
            let path = path(of: name)
            let bytes = try files.read(path)
            do throws(JournalError) {
                let scan = try Self.check(bytes, first: first, path: path, isLast: isLast)
                // A segment ends where the next begins; one the snapshot covers wholly is checked only.
                guard isLast || segments[index + 1] - 1 > base, examination.damage.isEmpty else { continue }
                if let stop = scan.stop {
                    examination.repairs.append(.cut(name: name, offset: scan.end, bytes: bytes[scan.end...], problem: stop.problem))
                }
                guard first <= next else {
                    throw JournalError(
                        .corrupt, path: path,
                        reason: "the segment starts at version \(first), but the journal reaches version \(next - 1) only: versions \(next) to \(first - 1) are missing")
                }
                for frame in scan.frames where frame.version > base {
                    guard frame.version == next else {
                        throw JournalError(
                            .corrupt, path: path, offset: frame.offset,
                            reason: "a record of version \(frame.version), which an earlier segment holds already")
                    }
                    let action = try decode(bytes[frame.payload], frame, path)
                    examination.contents.records.append(JournalRecord(version: frame.version, action: action))
                    next += 1
                }
                examination.last = LastSegment(
                    end: first + scan.frames.count - 1, length: scan.end, hasCommitMarks: scan.hasCommitMarks,
                    chain: scan.chain)
            } catch where error.kind == .corrupt || error.kind == .decoding {
                examination.damage.append(error)
            }
        }
    }

    /// The scan of a segment whose every record and mark passed its checks and whose versions go up by
    /// one from its name's, with at most a torn end (in the last segment); otherwise the damage.
    static func check(_ bytes: [UInt8], first: Int, path: String, isLast: Bool) throws(JournalError) -> JournalFormat.SegmentScan {
        let scan = try scan(bytes, first: first, path: path)
        if let stop = scan.stop, let damage = damage(stop, inLastSegment: isLast) {
            throw JournalError(.corrupt, path: path, offset: stop.offset, reason: damage)
        }
        for (index, frame) in scan.frames.enumerated() where frame.version != first + index {
            throw JournalError(
                .corrupt, path: path, offset: frame.offset,
                reason: "a record of version \(frame.version) where version \(first + index) was due")
        }
        return scan
    }

    /// The scan of a segment's bytes, or ``JournalError/Kind/corrupt`` when they are not a segment.
    static func scan(_ bytes: [UInt8], first: Int, path: String) throws(JournalError) -> JournalFormat.SegmentScan {
        guard let scan = JournalFormat.scanSegment(bytes, first: first) else {
            throw JournalError(.corrupt, path: path, offset: 0, reason: "not a journal segment: it starts with neither SWJRNL02 nor SWJRNL01")
        }
        return scan
    }

    /// Why `stop` is damage and not a torn write, or `nil` for a torn write: only the end of the last
    /// segment after its last commit mark can be torn, and only when nothing shows it was synced.
    static func damage(_ stop: JournalFormat.Stop, inLastSegment isLast: Bool) -> String? {
        guard isLast else {
            return "\(stop.problem), in a segment that is not the last one, so it is damage, not a torn write"
        }
        return stop.proof.map { "\(stop.problem); \($0), so this is damage to synced records, not a torn write" }
    }

    /// The records after `version`, at most `limit`, from the segments `state` lists, reading the
    /// current segment only up to its durable length. A record that fails its check there is damage.
    func durableRecords(after version: Int, limit: Int, in state: FileJournalState) throws(JournalError) -> [JournalRecord<A>] {
        var records: [JournalRecord<A>] = []
        for (index, first) in state.segments.enumerated() where records.count < limit {
            let isLast = index == state.segments.count - 1
            if !isLast, state.segments[index + 1] - 1 <= version { continue }
            let path = path(of: JournalFormat.segmentName(first: first))
            var bytes = try files.read(path)
            if isLast, let segment = state.segment { bytes.removeSubrange(min(segment.length, bytes.count)...) }
            let scan = try Self.scan(bytes, first: first, path: path)
            if let stop = scan.stop {
                throw JournalError(.corrupt, path: path, offset: stop.offset, reason: "\(stop.problem), in records already synced")
            }
            for frame in scan.frames where frame.version > version && records.count < limit {
                records.append(JournalRecord(version: frame.version, action: try decode(bytes[frame.payload], frame, path)))
            }
        }
        return records
    }

    /// The action in a record's payload.
    private func decode(_ payload: ArraySlice<UInt8>, _ frame: JournalFormat.Frame, _ path: String) throws(JournalError) -> A {
        do {
            return try decoder.decode(A.self, from: Data(payload))
        } catch {
            throw JournalError(
                .decoding, path: path, offset: frame.offset,
                reason: "the record of version \(frame.version) is intact but does not decode as \(A.self): \(error)")
        }
    }

    // MARK: Repairing

    /// What `repair` would do, for a report that changes nothing.
    func describe(_ repair: Repair) -> String {
        switch repair {
        case .setAside(let name, let reason):
            "\(path(of: name)): not usable (\(reason)); a load would set it aside and go on without it"
        case .cut(let name, let offset, let bytes, let problem):
            "\(path(of: name)), offset \(offset): \(bytes.count) bytes after the last commit mark (\(problem)), a write that never completed; a load would cut them off"
        }
    }

    /// Carries out `repairs` and returns a warning for each.
    private func perform(_ repairs: [Repair]) throws(JournalError) -> [String] {
        var warnings: [String] = []
        for repair in repairs {
            switch repair {
            case .setAside(let name, let reason):
                let aside = files.unusedName("\(name).damaged-\(seconds)")
                try files.move(path(of: name), to: path(of: aside))
                try files.sync()
                warnings.append("\(path(of: name)): not used (\(reason)); moved aside to \(aside)")
            case .cut(let name, let offset, let bytes, let problem):
                warnings.append(try cut(name, at: offset, bytes, problem: problem))
            }
        }
        return warnings
    }

    /// Copies `bytes`, the end of segment `name` from `offset` on, to a `.torn` file beside it (flushed),
    /// then cuts the segment at `offset` and flushes it; returns the warning saying so.
    private func cut(_ name: String, at offset: Int, _ bytes: ArraySlice<UInt8>, problem: String) throws(JournalError) -> String {
        let torn = files.unusedName("\(name).torn-\(seconds)")
        try files.writeCopy(bytes, to: path(of: torn))
        try files.sync()
        let segment = try files.open(path(of: name), O_WRONLY)
        try segment.truncate(to: offset)
        try segment.sync()
        return "\(path(of: name)), offset \(offset): cut \(bytes.count) bytes off the end (\(problem)); they are kept in \(torn)"
    }

    /// Cuts segment `name` at `offset` as a torn write, when it is longer (for a reopen after a failed
    /// write, which knows where the last completed flush ended); returns the warning, or `nil` when
    /// nothing follows `offset`.
    func cutTail(of name: String, at offset: Int, problem: String) throws(JournalError) -> String? {
        let bytes = try files.read(path(of: name))
        guard bytes.count > offset else { return nil }
        return try cut(name, at: offset, bytes[offset...], problem: problem)
    }

    private func path(of name: String) -> String {
        files.path(of: name)
    }
}
