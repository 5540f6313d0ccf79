import Foundation
import LiveServerCore
import StillwaterLive
import Testing

/// The real `live-server` on a small filesystem of its own (a 2 MiB tmpfs), filled to the last byte.
/// Needs root and a kernel that lets it mount tmpfs; skipped otherwise.
@Suite("The live-server program on a full disk", .serialized, .enabled(if: FullDisk.canMount(), "needs root and mount -t tmpfs"))
struct FullDiskTests {
    static let token = "full-disk-test-token-01"

    @Test("a full disk: commands get a retry error, reads keep working, writing resumes when space returns, nothing is lost")
    func fullDisk() async throws {
        try await FullDisk.withMount { mount in
            let arguments = ["--data", mount + "/data", "--team", "alpha=\(Self.token)"]
            let server = try ServerProcess(["--port", "0"] + arguments)
            defer { server.stop() }
            let port = try await server.port()
            let client = RawClient(port: port, team: "alpha", token: Self.token)
            let viewer = try await connectedClient(port: port, token: Self.token)
            guard try await client.perform(.add(text: "before"), cid: "before")["type"] as? String == "ack" else {
                Issue.record("the first command was refused")
                return
            }
            let filler = try FullDisk.fill(mount)
            // A record may still fit in the journal file's last page: commands are sent until one is
            // refused; every one acknowledged before must survive.
            var acknowledged = ["before"]
            var refused: (cid: String, text: String)?
            var lastVersion = 0
            for number in 0..<200 where refused == nil {
                let text = "while full \(number) " + String(repeating: "x", count: 150)
                let reply = try await client.perform(.add(text: text), cid: "full-\(number)")
                switch reply["type"] as? String {
                case "ack":
                    acknowledged.append(text)
                    lastVersion = reply["version"] as? Int ?? 0
                case "error":
                    #expect(reply["code"] as? String == "unavailable" && reply["retry"] as? Bool == true, "\(reply)")
                    refused = ("full-\(number)", text)
                default: Issue.record("\(reply)")
                }
            }
            let (cid, text) = try #require(refused, "no command was refused on a full disk")
            // Refused again, each with retry: true, and nothing changes (once the viewer has the patch of
            // the last acknowledged command).
            try await eventually("the last acknowledged version") {
                viewer.view.value?.items.last?.text == acknowledged.last && lastVersion >= 0
            }
            let before = try #require(viewer.view.value)
            for attempt in 0..<2 {
                let reply = try await client.perform(.add(text: text), cid: cid)
                guard reply["retry"] as? Bool == true else {
                    Issue.record("attempt \(attempt) on a full disk: \(reply)")
                    return
                }
            }
            #expect(viewer.view.value == before)
            // Reads keep working: a new client gets the board.
            let reader = try await connectedClient(port: port, token: Self.token)
            #expect(reader.view.value?.items.map(\.text) == before.items.map(\.text))
            // Space returns: the same command, sent again with its id, is applied once.
            try FileManager.default.removeItem(atPath: filler)
            let applied = try await client.perform(.add(text: text), cid: cid)
            guard applied["type"] as? String == "ack", applied["duplicate"] == nil else {
                Issue.record("the command after space returned was not applied: \(applied)")
                return
            }
            guard try await client.perform(.add(text: text), cid: cid)["duplicate"] as? Bool == true else {
                Issue.record("the retry was applied again")
                return
            }
            guard try await client.perform(.add(text: "after"), cid: "after")["type"] as? String == "ack" else {
                Issue.record("the command after was refused")
                return
            }
            acknowledged += [text, "after"]
            await client.close()
            await reader.close()
            await viewer.close()
            // A kill and a restart: every acknowledged command is there, once.
            server.send(SIGKILL)
            _ = try await server.exit(within: 10)
            let restarted = try ServerProcess(["--port", "0"] + arguments)
            defer { restarted.stop() }
            let checker = try await connectedClient(port: try await restarted.port(), token: Self.token)
            let texts = try #require(checker.view.value).items.map(\.text)
            for text in acknowledged { #expect(texts.filter { $0 == text }.count == 1, "\(text) in \(texts)") }
            await checker.close()
            restarted.send(SIGTERM)
            _ = try await restarted.exit(within: 10)
        }
    }
}

enum FullDisk {
    /// Whether a tmpfs can be mounted here (root, and allowed by the kernel), tried once.
    static func canMount() -> Bool {
        guard getuid() == 0 else { return false }
        let point = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-probe-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: point) }
        guard (try? FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)) != nil,
              (try? runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", point])) != nil
        else { return false }
        try? runCommand("/bin/umount", [point])
        return true
    }

    /// Runs `body` with a new 2 MiB tmpfs mounted at a folder of its own, unmounted afterwards.
    static func withMount<R>(_ body: (String) async throws -> R) async throws -> R {
        let point = FileManager.default.temporaryDirectory.appendingPathComponent("live-full-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        try runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", point])
        defer {
            try? runCommand("/bin/umount", ["-l", point])
            try? FileManager.default.removeItem(atPath: point)
        }
        return try await body(point)
    }

    /// Fills the filesystem at `folder` to its last byte with one file, whose path it returns.
    static func fill(_ folder: String) throws -> String {
        let path = folder + "/filler"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw TestFailure("cannot create \(path)") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 65_536)
        var size = chunk.count
        while size > 0 {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, size) }
            if written <= 0 { size /= 2 }
        }
        fsync(descriptor)
        return path
    }
}
