import Foundation
import Stillwater
import StillwaterHummingbird
import StillwaterLive

/// What a client of the library's protocol is shown of a board: its title and items. The version travels
/// in the frames (the log's version), not in the view.
public struct LiveBoardView: LiveView {
    /// The board's title.
    public var title: String
    /// The items, in order; sent as list patches.
    public var items: [BoardItem]

    /// The members clients are sent: the title when it changed, the items as a list patch.
    public static let liveFields: [LiveField<LiveBoardView>] = [.value("title", \.title), .list("items", \.items)]

    /// Creates a view.
    public init(title: String, items: [BoardItem]) {
        self.title = title
        self.items = items
    }
}

/// Who may do what on a board: a member reads and changes it, a viewer only reads it (and is not shown who
/// added each item).
public enum BoardRole: String, Codable, Hashable, Sendable {
    /// Holds the team's token: reads, changes, and sees who added each item.
    case member
    /// Holds the team's viewer token: reads the board without its ``BoardItem/addedBy``; every command is
    /// refused.
    case viewer
}

/// Who a client of a board is, once admitted: its team, its role, and the name it gave.
public struct BoardUser: Hashable, Sendable {
    /// The team whose board this is.
    public var team: String
    /// Member or viewer, from the token it presented.
    public var role: BoardRole
    /// The name it gave in its hello's `params.name` (trimmed, at most ``BoardUser/nameLimit`` characters),
    /// or "Member" / "Viewer" when it gave none. Not checked: anyone with a token may call themselves anything.
    public var name: String
    /// A member's viewer token (``ViewerTokens``), which its page offers as the read-only share link; nil
    /// for a viewer.
    public var viewerToken: String?

    /// The longest name kept, in characters.
    public static let nameLimit = 40

    /// Creates a user.
    public init(team: String, role: BoardRole, name: String, viewerToken: String? = nil) {
        self.team = team
        self.role = role
        self.name = name
        self.viewerToken = viewerToken
    }

    /// A member of `team` named `name` (for a server's own commands and for tests).
    public static func member(_ team: String, name: String = "Member") -> BoardUser {
        BoardUser(team: team, role: .member, name: name)
    }

    /// `name` trimmed of spaces and control characters, cut to ``nameLimit`` characters; nil when
    /// nothing is left.
    public static func cleanName(_ name: String?) -> String? {
        guard let name else { return nil }
        let kept = String(name.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }.map(Character.init))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return kept.isEmpty ? nil : String(kept.prefix(nameLimit))
    }
}

/// What the welcome tells a client about itself (`you`), and what every client of the board is shown of
/// it in `presence` frames (without the viewer token).
public struct BoardBadge: Codable, Equatable, Sendable {
    /// The name it gave.
    public var name: String
    /// `"member"` or `"viewer"`.
    public var role: BoardRole
    /// In a member's `you` only: the team's viewer token, for the read-only share link.
    public var viewerToken: String?

    /// Creates a badge.
    public init(name: String, role: BoardRole, viewerToken: String? = nil) {
        self.name = name
        self.role = role
        self.viewerToken = viewerToken
    }
}

/// Each team's viewer token, derived from its token's digest: `view-` and 64 hexadecimal digits.
///
/// A server that knows a team's digest (from `teams.json` or the database) knows its viewer token, so
/// nothing more is stored, every node of a cluster derives the same one, and a member's page is told it
/// in the welcome. Replacing the team's token (`--team NAME=NEWTOKEN`) replaces its viewer token too: the
/// way to revoke a viewer link.
///
/// ```swift
/// let token = ViewerTokens.token(forMemberDigest: LiveTokens.digest(of: "alpha-secret-token"))
/// print(token.hasPrefix("view-"), token.count)
/// // Prints "true 69"
/// ```
public enum ViewerTokens {
    /// The viewer token of the team whose token has `digest`.
    public static func token(forMemberDigest digest: [UInt8]) -> String {
        "view-" + LiveTokens.hexadecimal(LiveTokens.digest(of: "stillwater-board viewer token " + LiveTokens.hexadecimal(digest)))
    }

    /// The viewer token of the team whose token is `token`.
    public static func token(forMemberToken token: String) -> String {
        self.token(forMemberDigest: LiveTokens.digest(of: token))
    }

    /// The digests of the viewer tokens of the teams whose tokens have `digests`, by team: what a
    /// `LiveTokenTable` of viewers holds.
    public static func digests(forMemberDigests digests: [String: [UInt8]]) -> [String: [UInt8]] {
        digests.mapValues { LiveTokens.digest(of: token(forMemberDigest: $0)) }
    }
}

/// One team's board as a `LiveService`: the view of a ``Board`` for members and for viewers, its commands
/// checked and turned into ``BoardAction``s, and a client admitted only with the team's token (a member)
/// or its viewer token (a viewer).
///
/// A command's texts are trimmed and checked against ``Limits`` and the command against the board as it
/// will be once the commands before it are applied (``Board/rejection(of:)``); a refused one changes
/// nothing and its sender is told why. A viewer's commands are all refused. The token is the hello frame's
/// `token`, or the upgrade's `Authorization: Bearer` header when the adapter hands it over as the
/// transport's `authorization`; it is checked against the team's digests in two `LiveTokenTable`s (constant
/// time, and a digest replaced there is used from the next hello on). The welcome tells each client its
/// name and role (`you`), and every client of the board sees who is connected (`presence`).
///
/// ```swift
/// let access = LiveTokenTable(tokens: ["alpha": "alpha-secret-token"])
/// let service = BoardService(team: "alpha", access: access)
/// let log = MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>()
/// let hub = try await LiveHub.open(service, log: log, initial: Board(title: "Groceries"))
/// print(await hub.perform(.add(text: " milk "), as: .member("alpha", name: "Ann")), hub.view(for: .member).items.map(\.text))
/// // Prints "applied(version: 1) ["milk"]"
/// ```
public struct BoardService: LiveService {
    /// The team whose board this is.
    public let team: String
    /// The teams' token digests (shared with the server, so a replaced token counts at once).
    public let access: LiveTokenTable
    /// The teams' viewer token digests (``ViewerTokens/digests(forMemberDigests:)``), shared the same way.
    public let viewers: LiveTokenTable
    /// Called with a line for each client whose token is refused, naming the team and the client's
    /// address (the transport's `address`: the socket's peer, or the client a trusted proxy forwarded),
    /// such as `team alpha: a token was refused (client 203.0.113.7)`. `live-server` writes it to standard
    /// error.
    public let refused: @Sendable (String) -> Void

    /// Creates the service of `team`'s board, admitting clients that hold the token `access` knows for it
    /// (members) or the one `viewers` knows (viewers); each refusal is told to `refused`.
    public init(
        team: String, access: LiveTokenTable, viewers: LiveTokenTable = LiveTokenTable(digests: [:]),
        refused: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.team = team
        self.access = access
        self.viewers = viewers
        self.refused = refused
    }

    /// A client's audience: its role.
    public func audience(of user: BoardUser) -> BoardRole { user.role }

    /// The title and the items; a viewer's items leave out who added them.
    public func view(of state: Board, for role: BoardRole) -> LiveBoardView {
        switch role {
        case .member:
            return LiveBoardView(title: state.title, items: state.items)
        case .viewer:
            return LiveBoardView(title: state.title, items: state.items.map { item in
                var shown = item
                shown.addedBy = nil
                return shown
            })
        }
    }

    /// The client's name and role, and a member's viewer token.
    public func profile(of user: BoardUser) -> BoardBadge? {
        BoardBadge(name: user.name, role: user.role, viewerToken: user.viewerToken)
    }

    /// The client's name and role, shown to every client of the board while it is connected.
    public func presence(of user: BoardUser) -> BoardBadge? {
        BoardBadge(name: user.name, role: user.role)
    }

    /// Accepts a member's command that is well formed and fits the board (an add records the member's
    /// name as ``BoardItem/addedBy``); refuses it with the reason otherwise, and every viewer's.
    public func decide(_ command: BoardCommand, state: Board, identity user: BoardUser) -> LiveDecision<BoardAction> {
        guard user.role == .member else { return .reject("viewers cannot change the board") }
        do throws(CommandRejection) {
            let command = try command.checked()
            if let rejection = state.rejection(of: command) { return .reject(rejection.message) }
            if case .add = command { return .accept(BoardAction(command: command, by: user.name)) }
            return .accept(BoardAction(command: command))
        } catch {
            return .reject(error.message)
        }
    }

    /// Admits a client that presents the team's token (a member) or its viewer token (a viewer), in its
    /// hello or in the upgrade's `authorization`, under the name in its hello's `params.name`; tells
    /// ``refused`` of any other, with its address.
    public func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<BoardUser> {
        let token = handshake.presentedToken
        let name = BoardUser.cleanName(handshake.params["name"])
        if access.accepts(token, for: team), let token {
            return .accepted(BoardUser(
                team: team, role: .member, name: name ?? "Member",
                viewerToken: ViewerTokens.token(forMemberToken: token)))
        }
        if viewers.accepts(token, for: team) {
            return .accepted(BoardUser(team: team, role: .viewer, name: name ?? "Viewer"))
        }
        refused("team \(team): a token was refused (client \(handshake.transport["address"] ?? "unknown"))")
        return .refused("the token was refused")
    }
}
