import Foundation
import Stillwater

/// A data folder that cannot be used: one line, for standard error.
public struct DataFolderError: Error, CustomStringConvertible {
    /// What went wrong, naming the file.
    public var message: String

    /// The message.
    public var description: String { message }
}

/// The server's data folder: `teams.json` (each team's name and token digest, readable by its owner
/// only) and `boards/NAME/`, each board's journal and snapshots (a ``FileJournal``).
///
/// Nothing here is ever overwritten with less: `teams.json` is replaced by writing a new file and
/// renaming it over the old one, and a file that cannot be read stops the server with an error instead of
/// being replaced.
public struct DataFolder {
    /// One team as `teams.json` holds it.
    struct TeamEntry: Codable, Equatable {
        var name: String
        /// The SHA-256 digest of the team's token, in lowercase hexadecimal.
        var tokenSHA256: String
    }

    struct Registry: Codable {
        var teams: [TeamEntry] = []
    }

    /// The folder's path.
    public let path: String

    /// Names the folder at `path` (created when the server opens it).
    public init(path: String) { self.path = path }

    var registryPath: String { path + "/teams.json" }

    /// The folder of one team's board journal.
    public func journalDirectory(team: String) -> String { path + "/boards/" + team }

    /// What opening the folder made: the server and the tokens it generated (to print once).
    public struct Opened: Sendable {
        /// The server over the folder's boards.
        public var server: LiveServer
        /// Each new team's generated token, by team, in the order they were made.
        public var newTokens: [(team: String, token: String)]
    }

    /// Opens (or creates) the folder for `options`: reads the teams, adds the ones the options name,
    /// sets the tokens they give, generates a token for each new team without one, and opens every team's
    /// board from its journal. A folder with no team, opened with none named, gets teams `alpha` and
    /// `beta` with a few items each.
    ///
    /// - Parameter warn: Called with each warning (a journal's torn tail cut back).
    /// - Throws: ``DataFolderError`` when a file cannot be read or written, or what a journal throws
    ///   (its folder is used by another process, a damaged record that is not a torn tail).
    public func open(_ options: ServerOptions, warn: (String) -> Void) throws -> Opened {
        let (teams, newTokens) = try registeredTeams(options)
        var boards: [String: TeamBoard] = [:]
        for (name, _) in teams {
            let journal = try FileJournal<Board, BoardAction>(directory: journalDirectory(team: name))
            boards[name] = try TeamBoard(
                journal: journal, initial: Self.newBoard(named: name), snapshotEvery: options.snapshotEvery,
                warn: { warn("team \(name): \($0)") })
        }
        return Opened(server: server(boards: boards, teams: teams, options), newTokens: newTokens)
    }

    /// Opens the folder's teams as ``open(_:warn:)`` does, with each team's board a replica of its log in
    /// `node`'s database (made, for a new team, from the same first board as a file journal's).
    ///
    /// - Throws: ``DataFolderError`` as ``open(_:warn:)``, or what the database answers.
    public func open(_ options: ServerOptions, node: ClusterNode) async throws -> Opened {
        let (teams, newTokens) = try registeredTeams(options)
        var boards: [String: TeamBoard] = [:]
        for (name, _) in teams {
            boards[name] = try await node.open(name, initial: Self.newBoard(named: name), snapshotEvery: options.snapshotEvery)
        }
        return Opened(server: server(boards: boards, teams: teams, options), newTokens: newTokens)
    }

    private func server(boards: [String: TeamBoard], teams: [(name: String, digest: [UInt8])], _ options: ServerOptions) -> LiveServer {
        LiveServer(
            boards: boards,
            access: AccessPolicy(
                tokenDigests: Dictionary(uniqueKeysWithValues: teams.map { ($0.name, $0.digest) }),
                extraOrigins: Set(options.origins)),
            exposesStats: options.exposesStats, patchInterval: options.patchInterval,
            sendsWholeBoard: options.sendsWholeBoard)
    }

    private func registeredTeams(_ options: ServerOptions) throws -> (teams: [(name: String, digest: [UInt8])], newTokens: [(team: String, token: String)]) {
        do {
            try FileManager.default.createDirectory(atPath: path + "/boards", withIntermediateDirectories: true)
        } catch {
            throw DataFolderError(message: "cannot create the data folder \(path): \(error.localizedDescription)")
        }
        var registry = try readRegistry()
        var newTokens: [(team: String, token: String)] = []
        var named = options.teams
        if named.isEmpty && registry.teams.isEmpty {
            named = [ServerOptions.Team(name: "alpha", token: nil), ServerOptions.Team(name: "beta", token: nil)]
        }
        var changed = false
        for team in named {
            let digest: String
            if let token = team.token {
                digest = Self.hex(AccessPolicy.digest(of: token))
            } else if registry.teams.contains(where: { $0.name == team.name }) {
                continue
            } else {
                let token = AccessPolicy.newToken()
                newTokens.append((team.name, token))
                digest = Self.hex(AccessPolicy.digest(of: token))
            }
            if let index = registry.teams.firstIndex(where: { $0.name == team.name }) {
                if registry.teams[index].tokenSHA256 != digest {
                    registry.teams[index].tokenSHA256 = digest
                    changed = true
                }
            } else {
                registry.teams.append(TeamEntry(name: team.name, tokenSHA256: digest))
                changed = true
            }
        }
        if changed { try writeRegistry(registry) }

        return (try registry.teams.map { entry in
            guard ServerOptions.isTeamName(entry.name), let digest = Self.bytes(hex: entry.tokenSHA256), digest.count == 32 else {
                throw DataFolderError(message: "\(registryPath): team \"\(entry.name.prefix(40))\" has a bad name or token digest")
            }
            return (entry.name, digest)
        }, newTokens)
    }

    /// The first board of a new team: the two demo teams get a few items, others start empty.
    static func newBoard(named name: String) -> Board {
        switch name {
        case "alpha": Board(title: "Team Alpha", texts: LiveServer.alphaSeed)
        case "beta": Board(title: "Team Beta", texts: LiveServer.betaSeed)
        default: Board(title: name)
        }
    }

    private func readRegistry() throws -> Registry {
        guard FileManager.default.fileExists(atPath: registryPath) else { return Registry() }
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: registryPath))
            return try JSONDecoder().decode(Registry.self, from: data)
        } catch {
            throw DataFolderError(message: "cannot read \(registryPath): \(error.localizedDescription) (left as it is)")
        }
    }

    private func writeRegistry(_ registry: Registry) throws {
        let temporary = registryPath + ".new"
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(registry)
            guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw DataFolderError(message: "cannot write \(temporary)")
            }
            guard rename(temporary, registryPath) == 0 else {
                throw DataFolderError(message: "cannot replace \(registryPath): \(String(cString: strerror(errno)))")
            }
        } catch let error as DataFolderError {
            throw error
        } catch {
            throw DataFolderError(message: "cannot write \(registryPath): \(error.localizedDescription)")
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    static func bytes(hex: String) -> [UInt8]? {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let byte = UInt8(String(decoding: characters[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
