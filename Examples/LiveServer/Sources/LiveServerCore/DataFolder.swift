import Foundation
import Stillwater
import StillwaterHummingbird
import StillwaterLive

/// A board's journal: the library's log state of a ``Board`` and its ``BoardAction`` entries, in files.
public typealias BoardJournal = FileJournal<LiveLogState<Board>, LiveEntry<BoardAction>>

/// A data folder that cannot be used: one line, for standard error.
public struct DataFolderError: Error, CustomStringConvertible {
    /// What went wrong, naming the file.
    public var message: String

    /// The message.
    public var description: String { message }
}

/// The server's data folder: `live-server.lock` (held by the server using the folder, holding its
/// process id), `teams.json` (each team's name and token digest, readable by its owner only) and
/// `boards/NAME/`, each board's journal and snapshots (a ``BoardJournal``).
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
        /// The data format of the folder's files; absent in folders of older live-servers.
        var format: Int? = DataFolder.format
        var teams: [TeamEntry] = []
    }

    /// The data format this live-server writes and reads: `teams.json` holds it. An older live-server's
    /// folder (no `format` or a lower one, its journals in an older shape) is refused, not converted.
    static let format = 3

    /// The folder's path.
    public let path: String
    /// Called with a line for each client whose token a board refused (``BoardService/refused``).
    public var refused: @Sendable (String) -> Void = { _ in }
    /// Told what every board's hub does (its events named by the team); nil by default.
    public var observer: (any LiveObserver)?

    /// Names the folder at `path` (created when the server opens it).
    public init(path: String) { self.path = path }

    var registryPath: String { path + "/teams.json" }

    /// The folder of one team's board journal.
    public func journalDirectory(team: String) -> String { path + "/boards/" + team }

    /// What opening the folder made: each team's board hub, the teams' tokens, and the tokens it
    /// generated (to print once).
    public struct Opened: Sendable {
        /// Each team's board, by team.
        public var hubs: [String: LiveHub<BoardService>]
        /// The teams' token digests, shared by every hub's service.
        public var access: LiveTokenTable
        /// The teams' viewer token digests (``ViewerTokens``), shared the same way.
        public var viewers: LiveTokenTable
        /// Each new team's generated token, by team, in the order they were made.
        public var newTokens: [(team: String, token: String)]
        /// The folder's lock, held while this value (or a copy) lives.
        public var lock: FileLock
    }

    /// Takes the folder's lock (creating the folder first if need be): the first step of every open, so
    /// a start refused because another live-server uses the folder has changed no file.
    ///
    /// - Throws: ``DataFolderError`` naming the other live-server (its process id) when the folder is in
    ///   use, or the folder cannot be made.
    public func lock() throws -> FileLock {
        try makeFolder(path)
        let file = path + "/live-server.lock"
        do throws(FileLockError) {
            return try FileLock(path: file)
        } catch where error.kind == .held {
            throw DataFolderError(message: "the data folder is used by another live-server"
                + (error.holder.map { " (pid \($0))" } ?? "") + "; one live-server per data folder (\(file) is locked)")
        } catch {
            throw DataFolderError(message: "cannot lock the data folder: \(error)")
        }
    }

    private func makeFolder(_ folder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw DataFolderError(message: "cannot create the data folder \(path): \(error.localizedDescription)")
        }
    }

    /// Opens (or creates) the folder for `options`: reads the teams, adds the ones the options name,
    /// sets the tokens they give, generates a token for each new team without one, and opens every team's
    /// board hub on its journal (`boards/NAME/`, a `FileJournal`). A folder with no team, opened with none
    /// named, gets teams `alpha` and `beta` with a few items each.
    ///
    /// - Parameter warn: Called with each warning (a journal's torn tail cut back).
    /// - Throws: ``DataFolderError`` when a file cannot be read or written, or what a journal throws
    ///   (its folder is used by another process, a damaged record that is not a torn tail).
    public func open(_ options: ServerOptions, warn: (String) -> Void) async throws -> Opened {
        let lock = try lock()
        let (teams, newTokens) = try registeredTeams(options)
        return try await Self.opened(teams, newTokens: newTokens, lock: lock, refused: refused) { name, service in
            try await LiveHub.open(
                service, log: try BoardJournal(directory: journalDirectory(team: name)), initial: Self.newBoard(named: name),
                options: options.liveOptions(team: name, observer: observer), warn: { warn("team \(name): \($0)") })
        }
    }

    /// Opens the folder's teams as ``open(_:warn:)`` does, with each team's board a replica of its log in
    /// `node`'s database (its teams and tokens kept there too). Takes the folder's lock first, then
    /// starts `node`, waiting for its database as ``ClusterNode/start(waiting:)`` does (each failed
    /// attempt reported to `waiting`).
    ///
    /// - Throws: ``DataFolderError`` as ``open(_:warn:)``, or what the database answers.
    public func open(_ options: ServerOptions, node: ClusterNode, waiting: (String) -> Void = { _ in }) async throws -> Opened {
        let lock = try lock()
        try await node.start(waiting: { waiting("\($0)") })
        let (teams, newTokens) = try await clusterTeams(options, node: node)
        let opened = try await Self.opened(teams, newTokens: newTokens, lock: lock, refused: refused) { name, service in
            try await node.open(name, service: service, initial: Self.newBoard(named: name),
                                options: options.liveOptions(team: name, observer: observer))
        }
        node.onTeamsChanged { entries in
            // A digest that cannot be read keeps the team's previous one out: the team is refused.
            let digests = Dictionary(
                entries.compactMap { entry in LiveTokens.digest(hexadecimal: entry.tokenSHA256).map { (entry.name, $0) } }, uniquingKeysWith: { first, _ in first })
            opened.access.replaceDigests(digests)
            opened.viewers.replaceDigests(ViewerTokens.digests(forMemberDigests: digests))
        }
        return opened
    }

    /// Opens each of `teams`' hubs with `open`, their services sharing one policy of the teams' digests.
    private static func opened(
        _ teams: [(name: String, digest: [UInt8])], newTokens: [(team: String, token: String)], lock: FileLock,
        refused: @escaping @Sendable (String) -> Void, open: (String, BoardService) async throws -> LiveHub<BoardService>
    ) async throws -> Opened {
        let digests = Dictionary(uniqueKeysWithValues: teams.map { ($0.name, $0.digest) })
        let access = LiveTokenTable(digests: digests)
        let viewers = LiveTokenTable(digests: ViewerTokens.digests(forMemberDigests: digests))
        var hubs: [String: LiveHub<BoardService>] = [:]
        for (name, _) in teams {
            hubs[name] = try await open(name, BoardService(team: name, access: access, viewers: viewers, refused: refused))
        }
        return Opened(hubs: hubs, access: access, viewers: viewers, newTokens: newTokens, lock: lock)
    }

    private func registeredTeams(_ options: ServerOptions) throws -> (teams: [(name: String, digest: [UInt8])], newTokens: [(team: String, token: String)]) {
        try makeFolder(path + "/boards")
        var registry = try readRegistry()
        if let refusal = formatRefusal(of: registry) { throw refusal }
        let (changed, newTokens) = Self.register(options.teams, in: &registry)
        if !changed.isEmpty { try writeRegistry(registry) }
        return (try checked(registry.teams, source: registryPath), newTokens)
    }

    /// Adds the teams `named` to `registry` (``open(_:warn:)`` says how): sets the tokens they give and
    /// generates one for each new team without one; with no team named in an empty registry, adds
    /// `alpha` and `beta`.
    ///
    /// - Returns: The entries added or changed (those that must be stored), and the generated tokens.
    static func register(_ named: [ServerOptions.Team], in registry: inout Registry)
        -> (changed: [TeamEntry], newTokens: [(team: String, token: String)])
    {
        var newTokens: [(team: String, token: String)] = []
        var named = named
        if named.isEmpty && registry.teams.isEmpty {
            named = [ServerOptions.Team(name: "alpha", token: nil), ServerOptions.Team(name: "beta", token: nil)]
        }
        var changed: [TeamEntry] = []
        for team in named {
            let index = registry.teams.firstIndex { $0.name == team.name }
            // A known team named without a token keeps its own.
            guard team.token != nil || index == nil else { continue }
            let token = team.token ?? LiveTokens.newToken()
            if team.token == nil { newTokens.append((team.name, token)) }
            let entry = TeamEntry(name: team.name, token: token)
            if let index {
                guard registry.teams[index] != entry else { continue }
                registry.teams[index] = entry
            } else {
                registry.teams.append(entry)
            }
            changed.append(entry)
        }
        return (changed, newTokens)
    }

    /// The teams of `entries` with their digests as bytes; a bad name or digest throws, naming `source`.
    private func checked(_ entries: [TeamEntry], source: String) throws -> [(name: String, digest: [UInt8])] {
        try entries.map { entry in
            guard ServerOptions.isTeamName(entry.name), let digest = LiveTokens.digest(hexadecimal: entry.tokenSHA256) else {
                throw DataFolderError(message: "\(source): team \"\(entry.name.prefix(40))\" has a bad name or token digest")
            }
            return (entry.name, digest)
        }
    }

    /// The teams of a cluster, kept in its database (see ``ClusterNode``) instead of `teams.json`: a token set on one node holds on every node. Teams of a
    /// `teams.json` in the folder that the database lacks are added to it (a folder from before). A
    /// token this node generated is reported only if it is the one stored (another node may have stored
    /// its own for the same new team at once).
    private func clusterTeams(_ options: ServerOptions, node: ClusterNode) async throws
        -> (teams: [(name: String, digest: [UInt8])], newTokens: [(team: String, token: String)])
    {
        let file = try readRegistry()
        if let refusal = formatRefusal(of: file) { throw refusal }
        try await node.storeTeams(file.teams, keepingStored: true)
        var registry = Registry(teams: try await node.storedTeams())
        let (changed, generated) = Self.register(options.teams, in: &registry)
        let generatedTeams = Set(generated.map(\.team))
        try await node.storeTeams(changed.filter { !generatedTeams.contains($0.name) }, keepingStored: false)
        try await node.storeTeams(changed.filter { generatedTeams.contains($0.name) }, keepingStored: true)
        let stored = try await node.storedTeams()
        let newTokens = generated.filter { team in
            stored.first { $0.name == team.team } == TeamEntry(name: team.team, token: team.token)
        }
        return (try checked(stored, source: "the database's teams"), newTokens)
    }

    /// The first board of a new team: the two demo teams get a few items, others start empty.
    public static func newBoard(named name: String) -> Board {
        switch name {
        case "alpha": Board(title: "Team Alpha", texts: ["Write the release notes", "Review the store diff", "Fix the flaky test", "Plan the demo"])
        case "beta": Board(title: "Team Beta", texts: ["Order the cake", "Book the room"])
        default: Board(title: name)
        }
    }

    /// Checks the folder without serving it and without changing a file: `teams.json` is read and its
    /// entries checked, and every board's journal under `boards/` is verified as
    /// ``FileJournal/verify(directory:)`` does (every segment and snapshot, every record and commit mark).
    ///
    /// - Returns: One line per finding, each naming its file: damage (a start would refuse the folder) and
    ///   the repairs a start would make (a torn tail it would cut, a snapshot it would set aside), none
    ///   when a start would open everything as it is; and whether a start would refuse the folder.
    /// - Complexity: Reads every byte of every journal.
    public func check() -> (lines: [String], damaged: Bool) {
        var lines: [String] = []
        var damaged = false
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else {
            return (["no data folder at \(path)"], true)
        }
        do {
            let registry = try readRegistry()
            if let refusal = formatRefusal(of: registry) { return (["\(refusal)"], true) }
            _ = try checked(registry.teams, source: registryPath)
        } catch {
            lines.append("\(error)")
            damaged = true
        }
        let boards = path + "/boards"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: boards)) ?? []).sorted()
        for name in names where ServerOptions.isTeamName(name) {
            do {
                let report = try BoardJournal.verify(directory: journalDirectory(team: name))
                for damage in report.damage { lines.append("team \(name): \(damage)") }
                for repair in report.repairs { lines.append("team \(name): a start would repair: \(repair)") }
                damaged = damaged || !report.damage.isEmpty
            } catch {
                lines.append("team \(name): \(error)")
                damaged = true
            }
        }
        return (lines, damaged)
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

    /// Why a registry of another live-server's data format is refused (the folder must be started
    /// fresh), or `nil` for this one's.
    private func formatRefusal(of registry: Registry) -> DataFolderError? {
        guard registry.format != Self.format else { return nil }
        let writer = (registry.format ?? 1) < Self.format ? "an older" : "a newer"
        return DataFolderError(message: "\(path) was written by \(writer) live-server, whose boards this one "
            + "cannot read; start it with a fresh data folder (nothing was changed)")
    }

    private func writeRegistry(_ registry: Registry) throws {
        let temporary = registryPath + ".new"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Encoding names and hexadecimal strings cannot fail; writing the file can.
        guard let data = try? encoder.encode(registry),
              FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw DataFolderError(message: "cannot write \(temporary)") }
        guard rename(temporary, registryPath) == 0 else {
            throw DataFolderError(message: "cannot replace \(registryPath): \(String(cString: strerror(errno)))")
        }
    }
}

extension DataFolder.TeamEntry {
    /// The entry of team `name` with `token`: only its digest is kept.
    init(name: String, token: String) {
        self.init(name: name, tokenSHA256: LiveTokens.hexadecimal(LiveTokens.digest(of: token)))
    }
}
