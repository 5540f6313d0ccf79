#if Postgres
import Foundation
import NIOCore
import NIOSSL
import PostgresNIO

/// How a ``PostgresJournal`` uses TLS to its database: libpq's `sslmode`, named as libpq names it.
///
/// Set it in the URL: `postgres://app@db.internal/app?sslmode=verify-full&sslrootcert=/etc/app/db-ca.pem`.
/// Without `sslmode` the mode is ``prefer``, libpq's default, so a URL means here what it means to `psql`.
///
/// | Mode | TLS | The server's certificate |
/// | --- | --- | --- |
/// | `disable` | never | — |
/// | `prefer` | when the server offers it, else plain | not checked, unless `sslrootcert` is given (then as `verify-ca`) |
/// | `require` | always: a server without TLS is refused | not checked, unless `sslrootcert` is given (then as `verify-ca`) |
/// | `verify-ca` | always | signed by a root of `sslrootcert` (the system's roots without it) |
/// | `verify-full` | always | as `verify-ca`, and made out to the host the URL names |
///
/// Only ``verifyFull`` stops a machine in the middle from posing as the database; use it across any
/// network you do not control.
public enum PostgresSSLMode: String, Sendable, CaseIterable {
    /// No TLS.
    case disable
    /// TLS when the server offers it, a plain connection when it does not (the default).
    case prefer
    /// TLS or no connection.
    case require
    /// TLS with a certificate signed by a trusted root, whatever host it names.
    case verifyCA = "verify-ca"
    /// TLS with a certificate signed by a trusted root and made out to the URL's host.
    case verifyFull = "verify-full"
}

/// A `postgres://` URL that cannot be used.
///
/// ```swift
/// do {
///     _ = try PostgresJournal<Int, Int>(url: "postgres://app@127.0.0.1/app?sslmode=verify")
/// } catch {
///     print(error)
/// }
/// // Prints "sslmode: "verify" is not one of disable, prefer, require, verify-ca, verify-full"
/// ```
public struct PostgresURLError: Error, CustomStringConvertible {
    /// What is wrong, naming the URL's part or parameter.
    public var description: String
}

/// What a URL says: where to connect, as whom, and with which TLS.
struct PostgresURL {
    var host: String
    /// The address to connect to, when the URL's `hostaddr` sets one apart from `host`.
    var address: String?
    var port: Int
    var user: String
    var password: String?
    var database: String
    var sslMode: PostgresSSLMode
    /// The TLS settings for every mode but `disable`.
    var tls: TLSConfiguration?
    var applicationName: String?

    /// The parameters a URL may carry.
    static let parameters = ["sslmode", "sslrootcert", "hostaddr", "application_name"]

    init(_ text: String) throws(PostgresURLError) {
        guard let url = URLComponents(string: text), let scheme = url.scheme,
              scheme == "postgres" || scheme == "postgresql"
        else {
            throw PostgresURLError(description: "\"\(Self.redacted(text))\" is not a postgres:// URL (postgres://USER@HOST:PORT/DATABASE)")
        }
        let shown = Self.redacted(text)
        guard let host = url.host, !host.isEmpty else { throw PostgresURLError(description: "\"\(shown)\" names no host") }
        guard let user = url.user, !user.isEmpty else { throw PostgresURLError(description: "\"\(shown)\" names no user") }
        let port = url.port ?? 5432
        guard (1...65_535).contains(port) else { throw PostgresURLError(description: "\"\(shown)\" has port \(port), not 1 to 65535") }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        var values: [String: String] = [:]
        for item in url.queryItems ?? [] {
            guard Self.parameters.contains(item.name) else {
                throw PostgresURLError(description: "\(item.name): not a parameter this URL takes (\(Self.parameters.joined(separator: ", ")))")
            }
            guard values[item.name] == nil else { throw PostgresURLError(description: "\(item.name): given more than once") }
            values[item.name] = item.value ?? ""
        }
        self.host = host
        self.port = port
        self.user = user
        self.password = url.password
        self.database = database.isEmpty ? user : database
        self.applicationName = values["application_name"]
        if let address = values["hostaddr"] {
            guard (try? SocketAddress(ipAddress: address, port: port)) != nil else {
                throw PostgresURLError(description: "hostaddr: \"\(address)\" is not an IPv4 or IPv6 address")
            }
            self.address = address
        }
        if let mode = values["sslmode"] {
            guard let known = PostgresSSLMode(rawValue: mode) else {
                let names = PostgresSSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw PostgresURLError(description: "sslmode: \"\(mode)\" is not one of \(names)")
            }
            sslMode = known
        } else {
            sslMode = .prefer
        }
        tls = try Self.tls(mode: sslMode, rootCertificate: values["sslrootcert"])
    }

    /// The TLS settings `mode` asks for, trusting the roots in the file `rootCertificate` (or the system's
    /// for `system`, as libpq reads it).
    static func tls(mode: PostgresSSLMode, rootCertificate: String?) throws(PostgresURLError) -> TLSConfiguration? {
        if mode == .disable { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch rootCertificate {
        case nil, "system":
            tls.trustRoots = .default
        case let path?:
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw PostgresURLError(description: "sslrootcert: no readable file at \(path)")
            }
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw PostgresURLError(description: "sslrootcert: \(path) holds no PEM certificate (\(error))")
            }
            guard !certificates.isEmpty else { throw PostgresURLError(description: "sslrootcert: \(path) holds no PEM certificate") }
            tls.trustRoots = .certificates(certificates)
        }
        switch mode {
        case .disable: return nil
        case .prefer, .require: tls.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        return tls
    }

    /// `text` with its password, if any, replaced by `***` (an error message must not show it).
    static func redacted(_ text: String) -> String {
        guard var url = URLComponents(string: text), url.password != nil else { return text }
        url.password = "***"
        return url.string ?? "(the URL)"
    }

    /// The host name to check the certificate against when connecting to ``address`` instead (none for an
    /// IP address: then the address connected to is checked).
    private var serverName: String? {
        guard address != nil, (try? SocketAddress(ipAddress: host, port: port)) == nil else { return nil }
        return host
    }

    /// The settings of one connection (the journal's listening connection and its one-off ones).
    func connectionConfiguration() throws(PostgresURLError) -> PostgresConnection.Configuration {
        var context: NIOSSLContext?
        if let tls {
            do {
                context = try NIOSSLContext(configuration: tls)
            } catch {
                throw PostgresURLError(description: "sslrootcert: the TLS settings cannot be used (\(error))")
            }
        }
        var configuration = PostgresConnection.Configuration(
            host: address ?? host, port: port, username: user, password: password, database: database,
            tls: context.map { sslMode == .prefer ? .prefer($0) : .require($0) } ?? .disable)
        configuration.options.tlsServerName = serverName
        return configuration
    }

    /// The settings of the journal's pool.
    func clientConfiguration() -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: address ?? host, port: port, username: user, password: password, database: database,
            tls: tls.map { sslMode == .prefer ? .prefer($0) : .require($0) } ?? .disable)
        configuration.options.tlsServerName = serverName
        return configuration
    }
}
#endif
