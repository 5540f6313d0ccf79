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

/// One team's board as a `LiveService`: the view of a ``Board``, its commands checked and turned into
/// ``BoardAction``s, and a client admitted only with the team's token.
///
/// A command's texts are trimmed and checked against ``Limits`` and the command against the board as it
/// will be once the commands before it are applied (``Board/rejection(of:)``); a refused one changes
/// nothing and its sender is told why. The token is the hello frame's `token`, or the upgrade's
/// `Authorization: Bearer` header when the adapter hands it over as the transport's `authorization`;
/// it is checked against the team's digest in a `LiveTokenTable` (constant time, and a digest replaced
/// there is used from the next hello on).
///
/// ```swift
/// let access = LiveTokenTable(tokens: ["alpha": "alpha-secret-token"])
/// let service = BoardService(team: "alpha", access: access)
/// let log = MemoryJournal<LiveLogState<Board>, LiveEntry<BoardAction>>()
/// let hub = try await LiveHub.open(service, log: log, initial: Board(title: "Groceries"))
/// print(await hub.perform(.add(text: " milk "), as: "alpha"), hub.view.items.map(\.text))
/// // Prints "applied(version: 1) ["milk"]"
/// ```
public struct BoardService: LiveService {
    /// The team whose board this is: the identity of every client it admits.
    public let team: String
    /// The teams' token digests (shared with the server, so a replaced token counts at once).
    public let access: LiveTokenTable
    /// Called with a line for each client whose token is refused, naming the team and the client's
    /// address (the transport's `address`: the socket's peer, or the client a trusted proxy forwarded),
    /// such as `team alpha: a token was refused (client 203.0.113.7)`. `live-server` writes it to standard
    /// error.
    public let refused: @Sendable (String) -> Void

    /// Creates the service of `team`'s board, admitting clients that hold the token `access` knows for it;
    /// each refusal is told to `refused`.
    public init(team: String, access: LiveTokenTable, refused: @escaping @Sendable (String) -> Void = { _ in }) {
        self.team = team
        self.access = access
        self.refused = refused
    }

    /// The title and the items.
    public func view(of state: Board) -> LiveBoardView {
        LiveBoardView(title: state.title, items: state.items)
    }

    /// Accepts a command that is well formed and fits the board; refuses it with the reason otherwise.
    public func decide(_ command: BoardCommand, state: Board, identity: String) -> LiveDecision<BoardAction> {
        do throws(CommandRejection) {
            let command = try command.checked()
            if let rejection = state.rejection(of: command) { return .reject(rejection.message) }
            return .accept(BoardAction(command: command))
        } catch {
            return .reject(error.message)
        }
    }

    /// Admits a client that presents the team's token, in its hello or in the upgrade's `authorization`;
    /// tells ``refused`` of any other, with its address.
    public func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> {
        guard access.accepts(handshake.presentedToken, for: team) else {
            refused("team \(team): a token was refused (client \(handshake.transport["address"] ?? "unknown"))")
            return .refused("the token was refused")
        }
        return .accepted(team)
    }
}
