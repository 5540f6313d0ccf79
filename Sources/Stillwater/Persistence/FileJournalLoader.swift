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
    let directory: String
    private let decoder = JSONDecoder()
    /// The time that names the files repairs leave behind.
    private let seconds = Int(Date().timeIntervalSince1970)

    init(directory: String) {
        self.directory = directory
    }

    /// A repair decided while reading, carried out once everything was read.
    private enum Repair {
        /// Move a snapshot that failed its check aside.
        case setAside(name: String, reason: String)
        /// Cut the last segment at `offset`, keeping the bytes cut in a file beside it.
        case cut(name: String, offset: Int, bytes: ArraySlice<UInt8>, problem: String)
    }

    /// Reads the journal, repairs it, opens its segment, and returns what it holds and the state the
    /// journal continues from.
    func load() throws -> (JournalContents<State, A>, FileJournalState) {
        var snapshots: [Int] = []
        var segments: [Int] = []
        for name in try JournalDirectory.names(in: directory) {
            if let version = JournalFormat.snapshotVersion(name) { snapshots.append(version) }
            if let version = JournalFormat.segmentVersion(name) { segments.append(version) }
        }
        snapshots.sort()
        segments.sort()

        var repairs: [Repair] = []
        let (snapshot, usable) = try newestSnapshot(of: snapshots, repairs: &repairs)
        let (records, last) = try records(after: snapshot?.version ?? 0, in: segments, repairs: &repairs)
        let contents = JournalContents(snapshot: snapshot, records: records, warnings: try perform(repairs))

        var state = FileJournalState()
        state.loaded = true
        state.appendedVersion = contents.version
        state.durableVersion = contents.version
        state.snapshots = usable
        state.segments = segments
        if let first = segments.last, last.end == contents.version, last.hasCommitMarks {
            let file = try JournalFile.open(path(of: JournalFormat.segmentName(first: first)), O_WRONLY | O_APPEND)
            state.segment = FileJournalState.Segment(file: file, first: first, length: last.length, chain: last.chain)
        } else {
            // No segment yet, the snapshot is newer than the last record, or the last segment is of the
            // first format: records go on in a new segment (replacing an empty one of the same name).
            let next = contents.version + 1
            state.segment = try FileJournalState.createSegment(first: next, in: directory)
            if state.segments.last != next { state.segments.append(next) }
        }
        return (contents, state)
    }

    // MARK: Reading

    /// The newest snapshot whose file passes its check, and the versions of every usable snapshot file
    /// (the ones older than it are not checked). A damaged one is to be set aside.
    private func newestSnapshot(
        of versions: [Int], repairs: inout [Repair]
    ) throws -> (JournalSnapshot<State>?, usable: [Int]) {
        var usable = versions
        for (index, version) in versions.enumerated().reversed() {
            let name = JournalFormat.snapshotName(version: version)
            let bytes = try JournalDirectory.read(path(of: name))
            switch JournalFormat.snapshotJSON(in: bytes, version: version) {
            case .failure(let damage):
                repairs.append(.setAside(name: name, reason: damage.reason))
                usable.remove(at: index)
            case .success(let json):
                let body: SnapshotBody<State>
                do {
                    body = try decoder.decode(SnapshotBody<State>.self, from: Data(bytes[json]))
                } catch {
                    throw JournalError(
                        .decoding, path: path(of: name),
                        reason: "the snapshot of version \(version) is intact but does not decode as \(State.self): \(error)")
                }
                guard body.version == version else {
                    repairs.append(.setAside(name: name, reason: "its JSON says version \(body.version)"))
                    usable.remove(at: index)
                    continue
                }
                return (JournalSnapshot(version: version, state: body.state), usable)
            }
        }
        return (nil, usable)
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

    /// The records after `base`, from the segments that may hold them, and the version the last segment
    /// ends at and its length once repaired. A bad record at the end of the last segment is to be cut;
    /// anywhere else it is thrown.
    private func records(
        after base: Int, in segments: [Int], repairs: inout [Repair]
    ) throws -> ([JournalRecord<A>], last: LastSegment) {
        var records: [JournalRecord<A>] = []
        var next = base + 1
        var last = LastSegment(end: 0, length: 0, hasCommitMarks: true, chain: 0)
        for (index, first) in segments.enumerated() {
            let isLast = index == segments.count - 1
            // A segment ends where the next begins; one the snapshot covers wholly is not read.
            if !isLast, segments[index + 1] - 1 <= base { continue }
            let name = JournalFormat.segmentName(first: first)
            let path = path(of: name)
            let bytes = try JournalDirectory.read(path)
            let scan = try Self.scan(bytes, first: first, path: path)
            if let stop = scan.stop {
                if let damage = Self.damage(stop, inLastSegment: isLast) {
                    throw JournalError(.corrupt, path: path, offset: stop.offset, reason: damage)
                }
                repairs.append(.cut(name: name, offset: scan.end, bytes: bytes[scan.end...], problem: stop.problem))
            }
            guard first <= next else {
                throw JournalError(
                    .corrupt, path: path,
                    reason: "the segment starts at version \(first), but the journal reaches version \(next - 1) only: versions \(next) to \(first - 1) are missing")
            }
            var expected = first
            for frame in scan.frames {
                guard frame.version == expected else {
                    throw JournalError(
                        .corrupt, path: path, offset: frame.offset,
                        reason: "a record of version \(frame.version) where version \(expected) was due")
                }
                expected += 1
                guard frame.version > base else { continue }
                guard frame.version == next else {
                    throw JournalError(
                        .corrupt, path: path, offset: frame.offset,
                        reason: "a record of version \(frame.version), which an earlier segment holds already")
                }
                let action = try decode(bytes[frame.payload], frame, path)
                records.append(JournalRecord(version: frame.version, action: action))
                next += 1
            }
            last = LastSegment(end: expected - 1, length: scan.end, hasCommitMarks: scan.hasCommitMarks, chain: scan.chain)
        }
        return (records, last)
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
    func durableRecords(after version: Int, limit: Int, in state: FileJournalState) throws -> [JournalRecord<A>] {
        var records: [JournalRecord<A>] = []
        for (index, first) in state.segments.enumerated() where records.count < limit {
            let isLast = index == state.segments.count - 1
            if !isLast, state.segments[index + 1] - 1 <= version { continue }
            let path = path(of: JournalFormat.segmentName(first: first))
            var bytes = try JournalDirectory.read(path)
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
    private func decode(_ payload: ArraySlice<UInt8>, _ frame: JournalFormat.Frame, _ path: String) throws -> A {
        do {
            return try decoder.decode(A.self, from: Data(payload))
        } catch {
            throw JournalError(
                .decoding, path: path, offset: frame.offset,
                reason: "the record of version \(frame.version) is intact but does not decode as \(A.self): \(error)")
        }
    }

    // MARK: Repairing

    /// Carries out `repairs` and returns a warning for each.
    private func perform(_ repairs: [Repair]) throws(JournalError) -> [String] {
        var warnings: [String] = []
        for repair in repairs {
            switch repair {
            case .setAside(let name, let reason):
                let aside = JournalDirectory.unusedName("\(name).damaged-\(seconds)", in: directory)
                try JournalDirectory.move(path(of: name), to: path(of: aside))
                try JournalDirectory.sync(directory)
                warnings.append("\(path(of: name)): not used (\(reason)); moved aside to \(aside)")
            case .cut(let name, let offset, let bytes, let problem):
                let torn = JournalDirectory.unusedName("\(name).torn-\(seconds)", in: directory)
                try JournalDirectory.writeCopy(bytes, to: path(of: torn))
                try JournalDirectory.sync(directory)
                let segment = try JournalFile.open(path(of: name), O_WRONLY)
                try segment.truncate(to: offset)
                try segment.sync()
                warnings.append(
                    "\(path(of: name)), offset \(offset): cut \(bytes.count) bytes off the end (\(problem)); they are kept in \(torn)")
            }
        }
        return warnings
    }

    private func path(of name: String) -> String {
        JournalDirectory.path(of: name, in: directory)
    }
}
