#if Postgres
import Foundation
import Stillwater
import StillwaterPostgres
import StillwaterTesting
import Testing

// Against a PostgreSQL that takes TLS connections only, with a certificate for 127.0.0.1 and localhost
// signed by a CA of its own, named by LIVE_POSTGRES_TLS_URL with sslmode=verify-full and sslrootcert
// (`bash Examples/LiveServer/Tests/postgres.sh start-tls /tmp/pgtls 55433` prints it). With
// LIVE_POSTGRES_TLS_RESTART, a command that restarts that server, the restart test runs too.

let tlsDatabaseURL = ProcessInfo.processInfo.environment["LIVE_POSTGRES_TLS_URL"]
let tlsRestartCommand = ProcessInfo.processInfo.environment["LIVE_POSTGRES_TLS_RESTART"]

/// Runs `command` with `/bin/sh -c` and returns its exit status, waiting on a thread of its own (not on
/// the tasks' threads, which a blocking wait would hold; Foundation's `Process.waitUntilExit()` was seen
/// never to return here).
func shell(_ command: String) async -> Int32 {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            var pid = pid_t()
            let arguments = ["/bin/sh", "-c", command]
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            guard posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0 else {
                continuation.resume(returning: -1)
                return
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            // WIFEXITED and WEXITSTATUS, which Swift does not import.
            continuation.resume(returning: status & 0x7f == 0 ? (status >> 8) & 0xff : -1)
        }
    }
}

/// Checks that `journal` cannot prepare its tables because TLS failed, described as `expected` begins,
/// and that this is not taken for an unreachable database.
func expectTLSRefusal(_ journal: NotesJournal, _ expected: String, _ what: Comment) async {
    do {
        try await journal.prepare()
        Issue.record(what)
    } catch {
        #expect(!PostgresFailure.isUnreachable(error), "a refusal is not worth waiting for")
        #expect(PostgresFailure.describe(error).hasPrefix(expected), "\(PostgresFailure.describe(error))")
    }
}

/// `url` with the parameter `name` set to `value` (added, or replacing the one there).
func setting(_ name: String, to value: String, in url: String) -> String {
    var components = URLComponents(string: url)!
    var items = (components.queryItems ?? []).filter { $0.name != name }
    items.append(URLQueryItem(name: name, value: value))
    components.queryItems = items
    return components.string!
}

@Suite("PostgreSQL over TLS",
       .enabled(if: tlsDatabaseURL != nil, "LIVE_POSTGRES_TLS_URL is not set: these tests need a PostgreSQL with TLS to run against"),
       .serialized)
struct PostgresTLSTests {
    @Test("a log over sslmode=verify-full passes the shared ActionLog conformance suite")
    func conformanceOverVerifyFull() async throws {
        #expect(try NotesJournal(url: tlsDatabaseURL!).sslMode == .verifyFull)
        // The server refuses connections without TLS (postgres.sh start-tls), so every statement of the
        // suite goes over TLS with the certificate checked.
        try await checkConformance(url: tlsDatabaseURL!, prefix: "tls")
    }

    @Test("the server refuses a connection without TLS (so the test above used it)")
    func plainRefused() async throws {
        let journal = try NotesJournal(url: setting("sslmode", to: "disable", in: tlsDatabaseURL!), prefix: "tls")
        await #expect(throws: (any Error).self) { try await journal.prepare() }
        await journal.close()
    }

    @Test("verify-full refuses a certificate made out to other names than the host's")
    func otherHostRefused() async throws {
        // postgres.sh start-tls also listens on 127.0.0.2, which its certificate (127.0.0.1, localhost)
        // does not carry.
        var components = URLComponents(string: tlsDatabaseURL!)!
        components.host = "127.0.0.2"
        let journal = try NotesJournal(url: components.string!, prefix: "tls", options: PostgresJournalOptions(timeout: .seconds(1)))
        await expectTLSRefusal(journal, "TLS failed", "a certificate for 127.0.0.1 and localhost was taken for 127.0.0.2")
        // The same through the pool: no append goes through.
        let appender = journal.makeAppender()
        await #expect(throws: (any Error).self) { _ = try await journal.append([note("never")], to: "x", using: appender) }
        await journal.close()

        // By a name it does not carry, connecting to that address (libpq's host and hostaddr): refused too.
        components.host = "db.other.example"
        let other = try NotesJournal(url: setting("hostaddr", to: "127.0.0.2", in: components.string!), prefix: "tls")
        await #expect(throws: (any Error).self) { try await other.prepare() }
        await other.close()

        // The name the certificate carries, on the same address: taken.
        components.host = "localhost"
        let named = try NotesJournal(url: setting("hostaddr", to: "127.0.0.2", in: components.string!), prefix: "tls")
        try await named.prepare()
        await named.close()
    }

    @Test("verify-full refuses a certificate signed by a CA it was not told to trust")
    func untrustedRootRefused() async throws {
        let journal = try NotesJournal(url: setting("sslrootcert", to: "system", in: tlsDatabaseURL!), prefix: "tls")
        await expectTLSRefusal(journal, "TLS failed", "the test CA was trusted without sslrootcert")
        await journal.close()
    }

    @Test("require with the CA's certificate verifies the chain but not the name (libpq's verify-ca)")
    func requireWithRoot() async throws {
        var components = URLComponents(string: setting("sslmode", to: "require", in: tlsDatabaseURL!))!
        components.host = "127.0.0.2"
        let journal = try NotesJournal(url: components.string!, prefix: "tls")
        try await journal.prepare()
        #expect(journal.sslMode == .require)
        await journal.close()
    }

    @Test("a restart of the database is survived: appends go on, the listening connection comes back, notifications arrive",
          .enabled(if: tlsRestartCommand != nil, "LIVE_POSTGRES_TLS_RESTART is not set (a command restarting the TLS server)"))
    func restartSurvived() async throws {
        var options = PostgresJournalOptions()
        options.keepAliveInterval = .seconds(1)
        options.timeout = .seconds(5)
        let journal = try NotesJournal(url: tlsDatabaseURL!, prefix: "tls", options: options)
        try await journal.prepare()
        let log = "restart-" + UUID().uuidString.lowercased()
        let events = EventRecorder(journal.events())
        defer { events.stop() }
        try #require(try await events.wait(within: .seconds(20)) { $0.contains(.listening) }, "never listened")
        let appender = journal.makeAppender()
        #expect(try await journal.append([note("before", "c0")], to: log, using: appender) == [.appended(1)])

        try #require(await shell(tlsRestartCommand!) == 0, "the restart command failed")

        // The listening connection was cut: lost, then listening again.
        #expect(try await events.wait(within: .seconds(30)) { seen in
            guard let lost = seen.firstIndex(where: { if case .lost = $0 { true } else { false } }) else { return false }
            return seen[lost...].contains(.listening)
        }, "\(events.seen)")
        // The pool's connections were cut too: the next append gets a new one. An append sent while the
        // server was still coming back may fail; one after must not.
        let deadline = ContinuousClock.now + .seconds(15)
        var appended: [NotesJournal.Appended]?
        var failures: [String] = []
        while appended == nil, ContinuousClock.now < deadline {
            do {
                appended = try await journal.append([note("after", "c1")], to: log, using: appender)
            } catch {
                failures.append(PostgresFailure.describe(error))
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        #expect(appended == [.appended(2)], "\(failures)")
        #expect(failures.count <= 1, "appends kept failing after the restart: \(failures)")
        #expect(try await events.wait(within: .seconds(10)) { $0.contains(.appended(log: log, head: 2)) }, "\(events.seen)")
        #expect(try await journal.records(of: log, after: 0).map(\.cid) == ["c0", "c1"])
        await journal.close()
    }
}

@Suite("sslmode=require against a server without TLS",
       .enabled(if: databaseURL != nil, "LIVE_POSTGRES_URL is not set: these tests need a PostgreSQL to run against"))
struct PostgresRequireTests {
    @Test("require refuses a server that offers no TLS; prefer, the default, connects without it")
    func requireRefusesPlainServer() async throws {
        let journal = try NotesJournal(url: setting("sslmode", to: "require", in: databaseURL!), prefix: "test")
        await expectTLSRefusal(journal, "the server does not offer TLS, which sslmode requires",
                               "sslmode=require connected to a server without TLS")
        await journal.close()
        let preferring = try NotesJournal(url: databaseURL!, prefix: "test")
        #expect(preferring.sslMode == .prefer)
        try await preferring.prepare()
        await preferring.close()
    }
}

@Suite("PostgresJournal URLs and options")
struct PostgresURLParameterTests {
    let base = "postgres://app:secret@127.0.0.1:5432/app"

    @Test("sslmode is read as libpq names it; prefer without it")
    func sslModes() throws {
        #expect(try NotesJournal(url: base).sslMode == .prefer)
        for mode in PostgresSSLMode.allCases {
            #expect(try NotesJournal(url: base + "?sslmode=" + mode.rawValue).sslMode == mode)
        }
    }

    @Test("a bad parameter is refused with a message naming it", arguments: [
        ("?sslmode=verify", "sslmode: \"verify\" is not one of disable, prefer, require, verify-ca, verify-full"),
        ("?sslmode=allow", "sslmode: \"allow\" is not one of disable, prefer, require, verify-ca, verify-full"),
        ("?sslmode=require&sslrootcert=/no/such/ca.pem", "sslrootcert: no readable file at /no/such/ca.pem"),
        ("?ssl_mode=require", "ssl_mode: not a parameter this URL takes (sslmode, sslrootcert, hostaddr, application_name)"),
        ("?sslmode=require&sslmode=disable", "sslmode: given more than once"),
        ("?hostaddr=db.example", "hostaddr: \"db.example\" is not an IPv4 or IPv6 address"),
    ])
    func badParameter(suffix: String, message: String) {
        #expect(throws: PostgresURLError.self) { try NotesJournal(url: base + suffix) }
        do {
            _ = try NotesJournal(url: base + suffix)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("a file that holds no certificate is refused as sslrootcert")
    func notACertificate() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-ca-\(UUID().uuidString).pem").path
        try "not a certificate\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try NotesJournal(url: base + "?sslmode=verify-full&sslrootcert=" + path)
            Issue.record("a text file was taken for a certificate")
        } catch {
            #expect(error.description.hasPrefix("sslrootcert: \(path) holds no PEM certificate"), "\(error)")
        }
    }

    @Test("an error message does not show the URL's password")
    func passwordHidden() {
        do {
            _ = try NotesJournal(url: "postgres://app:secret@/app")
        } catch {
            #expect(!error.description.contains("secret"), "\(error)")
        }
    }

    @Test("options out of their range are refused with a message naming the setting", arguments: [
        (PostgresJournalOptions(maximumConnections: 0), "maximumConnections must be at least 1; got 0"),
        (PostgresJournalOptions(maximumConnections: 2, minimumConnections: 3), "minimumConnections must be 0 to maximumConnections (2); got 3"),
        (PostgresJournalOptions(timeout: .zero), "timeout must be positive; got 0.0 seconds"),
        (PostgresJournalOptions(keepAliveInterval: .seconds(-1)), "keepAliveInterval must be positive; got -1.0 seconds"),
    ])
    func badOptions(options: PostgresJournalOptions, message: String) {
        do {
            _ = try NotesJournal(url: base, options: options)
            Issue.record("\(options) was taken")
        } catch let error as PostgresOptionsError {
            #expect(error.description == message)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("a bad prefix or keptActions is an error from the initialiser with options, not a trap")
    func badPrefix() throws {
        #expect(throws: PostgresOptionsError.self) { try NotesJournal(url: base, prefix: "Bad-Prefix", options: .init()) }
        #expect(throws: PostgresOptionsError.self) { try NotesJournal(url: base, keptActions: -1, options: .init()) }
        #expect(try NotesJournal(url: base, options: .init(maximumConnections: 3)).options.maximumConnections == 3)
    }
}
#endif
