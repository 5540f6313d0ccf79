import Foundation
import StillwaterTesting
import Synchronization
@testable import Stillwater

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A disk in memory behind a ``JournalSystem``, that keeps apart what a crash keeps (flushed file
/// contents, flushed directory entries) and what it loses, and injects faults at chosen operations.
///
/// A crash keeps, of each file, its flushed bytes plus a prefix of the bytes appended since, the end of
/// which may read as zeros (pages never written); renames, creations and deletions not followed by a
/// flush of the directory are lost. Faults, each at a numbered operation (every write, flush, rename,
/// truncation, deletion and creation counts one):
/// - `crashAt`: the program stops there; a write is torn at a random byte first, a rename may or may not
///   have happened. Every later call fails.
/// - `failSyncAt`: that flush fails (`EIO`), having made a random prefix of the new bytes durable.
/// - `fullFrom ..< fullUntil`: writes fail with `ENOSPC` (after writing what fits: a random prefix).
/// - ``failNextSync()``: the next flush fails as `failSyncAt` does, whatever its number.
///
/// It also counts the flushes of files (``fileSyncs``), lists the threads that wrote and flushed
/// (``writerThreads``), and can hold the next flush of a file until released (``holdNextSync()``), so
/// that a test can queue appends behind a flush in progress.
final class SimulatedDisk: Sendable {
    struct Inode {
        var data: [UInt8] = []
        var durable: [UInt8] = []
    }

    struct Descriptor {
        var inode: Int?   // nil: the directory
        var append: Bool
        var position = 0
    }

    struct State {
        var inodes: [Int: Inode] = [:]
        var names: [String: Int] = [:]
        var durableNames: [String: Int] = [:]
        var descriptors: [Int32: Descriptor] = [:]
        var nextInode = 1
        var nextDescriptor: Int32 = 3
        var operations = 0
        var crashed = false
        var crashedBeforeRestart = false
        var random: SeededRandom
        var crashAt: Int?
        var failSyncAt: Int?
        var failNextSync = false
        var full: Range<Int> = 0..<0
        var fileSyncs = 0
        var failedSyncs = 0
        var writerThreads: Set<UInt> = []
    }

    /// A flush held until released: armed, then entered by the flush that waits.
    private struct Hold {
        var armed = false
        var entered = false
    }

    let directory: String
    private let state: Mutex<State>
    private let hold = Mutex(Hold())
    private let released = DispatchSemaphore(value: 0)

    init(directory: String, seed: UInt64) {
        self.directory = directory
        state = Mutex(State(random: SeededRandom(seed: seed)))
    }

    /// How many operations counted so far.
    var operations: Int { state.withLock { $0.operations } }
    /// Whether the program "stopped".
    var crashed: Bool { state.withLock { $0.crashed } }
    /// Whether it had stopped when `restart()` was last called.
    var crashedBeforeRestart: Bool { state.withLock { $0.crashedBeforeRestart } }

    /// How many flushes of files (not directories) returned successfully.
    var fileSyncs: Int { state.withLock { $0.fileSyncs } }
    /// How many flushes failed as scheduled (`failSyncAt`, ``failNextSync()``).
    var failedSyncs: Int { state.withLock { $0.failedSyncs } }
    /// The threads (`pthread_self()`) that wrote or flushed.
    var writerThreads: Set<UInt> { state.withLock { $0.writerThreads } }
    /// The paths of the files that exist now (flushed to the directory or not).
    var names: [String] { state.withLock { Array($0.names.keys) } }
    /// Whether a held flush is waiting to be released.
    var holdingSync: Bool { hold.withLock { $0.entered } }

    /// Makes the next flush fail (`EIO`), as `failSyncAt` does.
    func failNextSync() {
        state.withLock { $0.failNextSync = true }
    }

    /// Makes the next flush of a file wait, before it does anything, until ``releaseSync()``.
    func holdNextSync() {
        hold.withLock { $0 = Hold(armed: true) }
    }

    /// Lets the held flush go on.
    func releaseSync() {
        hold.withLock { $0 = Hold() }
        released.signal()
    }

    func schedule(crashAt: Int?, failSyncAt: Int?, full: Range<Int>) {
        state.withLock {
            $0.crashAt = crashAt
            $0.failSyncAt = failSyncAt
            $0.full = full
        }
    }

    /// What a restart finds: each file's flushed bytes plus a torn prefix of the rest, the flushed names.
    func restart() {
        state.withLock { state in
            var kept: [Int: Inode] = [:]
            for inode in Set(state.durableNames.values) {
                guard let file = state.inodes[inode] else { continue }
                var data = file.durable
                if file.data.count > file.durable.count, file.data.starts(with: file.durable) {
                    let extra = file.data.count - file.durable.count
                    let keep = Int.random(in: 0...extra, using: &state.random)
                    let zerosFrom = Bool.random(using: &state.random) ? keep : Int.random(in: 0...keep, using: &state.random)
                    data += file.data[file.durable.count..<(file.durable.count + zerosFrom)]
                    data += [UInt8](repeating: 0, count: keep - zerosFrom)
                }
                kept[inode] = Inode(data: data, durable: data)
            }
            state.inodes = kept
            state.names = state.durableNames
            state.descriptors = [:]
            state.crashedBeforeRestart = state.crashed
            state.crashed = false
            state.crashAt = nil
            state.failSyncAt = nil
            state.failNextSync = false
            state.full = 0..<0
        }
    }

    /// Counts an operation; returns what the fault plan says happens at it.
    private enum Fault { case none, crash, failSync, full }

    private static func count(_ state: inout State, isSync: Bool = false, isWrite: Bool = false) -> Fault {
        state.operations += 1
        if state.crashAt == state.operations {
            state.crashed = true
            return .crash
        }
        if isSync, state.failSyncAt == state.operations || state.failNextSync {
            state.failNextSync = false
            return .failSync
        }
        if isWrite, state.full.contains(state.operations) { return .full }
        return .none
    }

    private static func fail(_ code: Int32) -> Int32 {
        errno = code
        return -1
    }

    var system: JournalSystem {
        JournalSystem(
            open: { [self] path, flags in
                state.withLock { state -> Int32 in
                    if state.crashed { return Self.fail(EIO) }
                    if path == directory {
                        defer { state.nextDescriptor += 1 }
                        state.descriptors[state.nextDescriptor] = Descriptor(inode: nil, append: false)
                        return state.nextDescriptor
                    }
                    var inode = state.names[path]
                    if inode != nil, flags & O_EXCL != 0 { return Self.fail(EEXIST) }
                    if inode == nil || flags & O_TRUNC != 0 {
                        guard flags & O_CREAT != 0 else { return Self.fail(ENOENT) }
                        if Self.count(&state) == .crash { return Self.fail(EIO) }
                        if let existing = inode {
                            state.inodes[existing]?.data = []
                        } else {
                            inode = state.nextInode
                            state.inodes[state.nextInode] = Inode()
                            state.names[path] = state.nextInode
                            state.nextInode += 1
                        }
                    }
                    defer { state.nextDescriptor += 1 }
                    state.descriptors[state.nextDescriptor] = Descriptor(inode: inode, append: flags & O_APPEND != 0)
                    return state.nextDescriptor
                }
            },
            close: { [self] descriptor in state.withLock { _ = $0.descriptors.removeValue(forKey: descriptor) } },
            read: { [self] descriptor, buffer, offset in
                state.withLock { state -> Int in
                    guard !state.crashed, let inode = state.descriptors[descriptor]?.inode, let file = state.inodes[inode] else {
                        return Int(Self.fail(EIO))
                    }
                    let count = max(0, min(buffer.count, file.data.count - offset))
                    if count > 0 {
                        file.data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
                    }
                    return count
                }
            },
            write: { [self] descriptor, bytes in
                state.withLock { state -> Int in
                    state.writerThreads.insert(currentThread())
                    guard !state.crashed, var open = state.descriptors[descriptor], let inode = open.inode else { return Int(Self.fail(EIO)) }
                    var count = bytes.count
                    let fault = Self.count(&state, isWrite: true)
                    if fault != .none { count = Int.random(in: 0..<max(1, bytes.count), using: &state.random) }
                    var data = state.inodes[inode]?.data ?? []
                    let start = open.append ? data.count : open.position
                    if data.count < start + count { data += [UInt8](repeating: 0, count: start + count - data.count) }
                    data.replaceSubrange(start..<(start + count), with: bytes.prefix(count))
                    state.inodes[inode]?.data = data
                    open.position = start + count
                    state.descriptors[descriptor] = open
                    switch fault {
                    case .crash: return Int(Self.fail(EIO))
                    case .full: return count > 0 ? count : Int(Self.fail(ENOSPC))
                    default: return count
                    }
                }
            },
            sync: { [self] descriptor in
                let isFile = state.withLock { $0.descriptors[descriptor]?.inode != nil }
                let held = isFile && hold.withLock { hold in
                    guard hold.armed else { return false }
                    hold = Hold(armed: false, entered: true)
                    return true
                }
                if held {
                    released.wait()
                }
                return state.withLock { state -> Int32 in
                    state.writerThreads.insert(currentThread())
                    guard !state.crashed, let open = state.descriptors[descriptor] else { return Self.fail(EIO) }
                    switch Self.count(&state, isSync: true) {
                    case .crash: return Self.fail(EIO)
                    case .failSync:
                        state.failedSyncs += 1
                        if let inode = open.inode, let file = state.inodes[inode], file.data.starts(with: file.durable) {
                            let keep = Int.random(in: file.durable.count...file.data.count, using: &state.random)
                            state.inodes[inode]?.durable = Array(file.data[..<keep])
                        }
                        return Self.fail(EIO)
                    default:
                        if let inode = open.inode {
                            let data = state.inodes[inode]?.data ?? []
                            state.inodes[inode]?.durable = data
                            state.fileSyncs += 1
                        } else {
                            state.durableNames = state.names
                        }
                        return 0
                    }
                }
            },
            truncate: { [self] descriptor, length in
                state.withLock { state -> Int32 in
                    guard !state.crashed, let inode = state.descriptors[descriptor]?.inode else { return Self.fail(EIO) }
                    if Self.count(&state) == .crash { return Self.fail(EIO) }
                    var data = state.inodes[inode]?.data ?? []
                    data = data.count >= length ? Array(data[..<length]) : data + [UInt8](repeating: 0, count: length - data.count)
                    state.inodes[inode]?.data = data
                    return 0
                }
            },
            lock: { _ in 0 },
            rename: { [self] source, destination in
                state.withLock { state -> Int32 in
                    if state.crashed { return Self.fail(EIO) }
                    let fault = Self.count(&state)
                    // A crash here may come before the rename or after it (not yet flushed either way).
                    if fault == .crash, Bool.random(using: &state.random) { return Self.fail(EIO) }
                    guard let inode = state.names.removeValue(forKey: source) else { return Self.fail(ENOENT) }
                    state.names[destination] = inode
                    return fault == .crash ? Self.fail(EIO) : 0
                }
            },
            remove: { [self] path in
                state.withLock { state -> Int32 in
                    if state.crashed { return Self.fail(EIO) }
                    if Self.count(&state) == .crash { return Self.fail(EIO) }
                    return state.names.removeValue(forKey: path) == nil ? Self.fail(ENOENT) : 0
                }
            },
            exists: { [self] path in state.withLock { $0.names[path] != nil } },
            list: { [self] directory in
                state.withLock { state -> [String]? in
                    if state.crashed { errno = EIO; return nil }
                    return state.names.keys.filter { $0.hasPrefix(directory + "/") }.map { String($0.dropFirst(directory.count + 1)) }
                }
            },
            makeDirectory: { _ in 0 })
    }
}
