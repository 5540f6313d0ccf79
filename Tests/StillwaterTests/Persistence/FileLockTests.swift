import Foundation
import Stillwater
import Testing

@Suite("FileLock")
struct FileLockTests {
    /// A path in a folder new to the test, removed afterwards.
    private func withFolder(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("file-lock-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try body(folder)
    }

    @Test("a second lock on a held file is refused, naming the holder's process id, until the first is freed")
    func secondLockRefused() throws {
        try withFolder { folder in
            let path = folder + "/app.lock"
            var first: FileLock? = try FileLock(path: path)
            let pid = ProcessInfo.processInfo.processIdentifier
            #expect(String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) == "\(pid)\n")
            do throws(FileLockError) {
                _ = try FileLock(path: path, patience: .milliseconds(20))
                Issue.record("a held lock was taken again")
            } catch {
                #expect(error.kind == .held)
                #expect(error.holder == pid)
                #expect("\(error)" == "\(path): held by another process (pid \(pid))")
            }
            withExtendedLifetime(first) {}
            first = nil
            // The default patience: a process started meanwhile by a test running beside this one may hold a
            // copy of the freed descriptor for a moment.
            let second = try FileLock(path: path)
            #expect(second.path == path)
        }
    }

    @Test("a lock in a folder that does not exist fails, naming the file and the reason")
    func missingFolder() throws {
        try withFolder { folder in
            let path = folder + "/missing/app.lock"
            do throws(FileLockError) {
                _ = try FileLock(path: path)
                Issue.record("a lock was taken in a missing folder")
            } catch {
                #expect(error.kind == .failed)
                #expect(error.holder == nil)
                #expect(error.path == path)
                #expect(error.reason.contains("No such file"), "\(error.reason)")
            }
        }
    }

    @Test("a refused lock leaves the holder's file as it was")
    func refusalWritesNothing() throws {
        try withFolder { folder in
            let path = folder + "/app.lock"
            let first = try FileLock(path: path)
            let before = FileManager.default.contents(atPath: path)
            #expect(throws: FileLockError.self) { try FileLock(path: path, patience: .zero) }
            #expect(FileManager.default.contents(atPath: path) == before)
            withExtendedLifetime(first) {}
        }
    }
}
