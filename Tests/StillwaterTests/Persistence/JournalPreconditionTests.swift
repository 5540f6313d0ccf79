import Foundation
import Testing
@testable import Stillwater

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PersistenceTests {
    /// Misuse that must stop the program, and a failing disk, each in a process of its own.
    @Suite("Journal preconditions and failed writes")
    struct JournalPreconditionTests {
        @Test("an append whose version is not the next one stops the program", arguments: ["memory skips", "memory repeats", "file skips"])
        func wrongVersion(_ kind: String) async {
            // Exit tests cannot capture `kind`, so each case is its own body.
            switch kind {
            case "memory skips":
                await #expect(processExitsWith: .failure) {
                    let journal = MemoryJournal<Tally, TallyAction>()
                    _ = try journal.load()
                    try journal.append(.increment, version: 2)
                }
            case "memory repeats":
                await #expect(processExitsWith: .failure) {
                    let journal = MemoryJournal<Tally, TallyAction>()
                    _ = try journal.load()
                    try journal.append(.increment, version: 1)
                    try journal.append(.increment, version: 1)
                }
            default:
                await #expect(processExitsWith: .failure) {
                    let directory = NSTemporaryDirectory() + "/stillwater-journal-\(UUID().uuidString)"
                    let journal = try? FileJournal<Tally, TallyAction>(directory: directory)
                    _ = try? journal?.load()
                    try? journal?.append(.increment, version: 5)
                }
            }
        }

        @Test("appending before load stops the program")
        func appendBeforeLoad() async {
            await #expect(processExitsWith: .failure) {
                try MemoryJournal<Tally, TallyAction>().append(.increment, version: 1)
            }
        }

        @Test("an ActionLog append of no entries stops the program", arguments: ["memory", "file"])
        func emptyAppend(_ kind: String) async {
            if kind == "memory" {
                await #expect(processExitsWith: .failure) {
                    let journal = MemoryJournal<Tally, TallyAction>()
                    _ = try await journal.open()
                    _ = try await journal.append([])
                }
            } else {
                await #expect(processExitsWith: .failure) {
                    let directory = NSTemporaryDirectory() + "/stillwater-journal-\(UUID().uuidString)"
                    defer { try? FileManager.default.removeItem(atPath: directory) }
                    // A journal that cannot be set up exits with success, which fails the test.
                    guard let journal = try? FileJournal<Tally, TallyAction>(directory: directory),
                          (try? await journal.open()) != nil
                    else { exit(0) }
                    _ = try? await journal.append([])
                }
            }
        }

        @Test("a snapshot beyond the last appended version stops the program")
        func snapshotAhead() async {
            await #expect(processExitsWith: .failure) {
                let journal = MemoryJournal<Tally, TallyAction>()
                _ = try journal.load()
                try? journal.writeSnapshot(Tally(), version: 1)
            }
        }

        #if os(Linux)
        /// A write that fails part-way (here: the file size limit, as a full disk would) stops the journal:
        /// every later write is refused as stopped and leaves the segment as it is, until load() reopens the
        /// journal, cutting what followed the last completed flush off as a torn write. The limit is set in
        /// a process of its own; a failed check exits with a status of its own.
        @Test("a failed write stops the journal until load(), which cuts the segment back to its last flushed length")
        func failedWrite() async {
            await #expect(processExitsWith: .success) {
                signal(SIGXFSZ, SIG_IGN)
                let directory = NSTemporaryDirectory() + "/stillwater-journal-\(UUID().uuidString)"
                defer { try? FileManager.default.removeItem(atPath: directory) }
                guard let journal = try? FileJournal<Tally, TallyAction>(directory: directory), (try? journal.load()) != nil,
                      (try? journal.append(.increment, version: 1)) != nil, (try? journal.sync()) != nil
                else { exit(10) }
                let segment = directory + "/journal-00000000000000000001.log"
                let synced = FileManager.default.contents(atPath: segment)?.count ?? -1
                let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
                var original = rlimit()
                getrlimit(resource, &original)
                var limit = original
                limit.rlim_cur = rlim_t(synced + 10)
                guard setrlimit(resource, &limit) == 0 else { exit(11) }

                guard (try? journal.append(.append(String(repeating: "x", count: 500)), version: 2)) != nil else { exit(12) }
                do {
                    try journal.sync()
                    exit(13)
                } catch let error as JournalError {
                    guard error.kind == .unwritable, error.path == segment else { exit(14) }
                } catch {
                    exit(15)
                }
                let written = FileManager.default.contents(atPath: segment)?.count ?? -1
                guard written > synced else { exit(16) }
                guard setrlimit(resource, &original) == 0 else { exit(17) }
                // Stopped: refused, and nothing written, though the disk has room again.
                do {
                    try journal.append(.add(2), version: 2)
                    exit(18)
                } catch let error as JournalError {
                    guard error.kind == .stopped, error.reason.contains("load()") else { exit(19) }
                } catch {
                    exit(20)
                }
                guard (try? journal.sync()) == nil, FileManager.default.contents(atPath: segment)?.count == written else { exit(21) }
                guard let reopened = try? journal.load(), reopened.records.map(\.action) == [.increment], reopened.warnings.count == 1,
                      FileManager.default.contents(atPath: segment)?.count == synced
                else { exit(22) }
                guard (try? journal.append(.add(2), version: 2)) != nil, (try? journal.sync()) != nil else { exit(23) }
                guard let contents = try? journal.load(), contents.records.map(\.action) == [.increment, .add(2)] else {
                    exit(24)
                }
            }
        }
        #endif
    }
}
