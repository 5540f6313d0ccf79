import Foundation
import Stillwater

/// What a server serves live: its state and actions, the view clients are shown, the commands they send,
/// and who may connect.
///
/// A type conforming to `LiveService` is the whole of an app's part in ``LiveHub``: the hub keeps the
/// state in a log and a `Store`, shows each client the ``view(of:)`` of the state, turns each command a
/// client sends into an action with ``decide(_:state:identity:)``, and admits a client only after
/// ``authenticate(_:)`` said who it is.
///
/// ```swift
/// import StillwaterLive
///
/// struct Counter: Codable, Sendable { var count = 0 }
/// struct Add: Action, Codable, Sendable {
///     var amount: Int
///     func reduce(_ state: inout Counter) { state.count += amount }
/// }
/// struct CounterView: LiveView {
///     var count: Int
///     static let liveFields: [LiveField<CounterView>] = [.value("count", \.count)]
/// }
/// struct CounterService: LiveService {
///     func view(of state: Counter) -> CounterView { CounterView(count: state.count) }
///     func decide(_ command: Int, state: Counter, identity: String) -> LiveDecision<Add> {
///         command > 0 ? .accept(Add(amount: command)) : .reject("only positive amounts")
///     }
///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> {
///         handshake.token == "secret" ? .accepted("the only user") : .refused("wrong token")
///     }
/// }
/// let log = MemoryJournal<LiveLogState<Counter>, LiveEntry<Add>>()
/// let hub = try await LiveHub.open(CounterService(), log: log, initial: Counter())
/// let outcome = await hub.perform(3, as: "the only user")
/// print(outcome, hub.view.count)
/// // Prints "applied(version: 1) 3"
/// ```
public protocol LiveService: Sendable {
    /// The state the hub keeps in its log and its store.
    associatedtype State: Codable & Sendable
    /// The actions that change the state: what the log records, one entry per accepted command.
    associatedtype LiveAction: Action & Codable & Sendable where LiveAction.State == State
    /// What clients are shown of the state.
    associatedtype View: LiveView
    /// What clients send, decoded from the `command` member of a command frame.
    associatedtype Command: Decodable & Sendable
    /// Who a client is, once ``authenticate(_:)`` admitted it; handed to ``decide(_:state:identity:)``.
    associatedtype Identity: Sendable
    /// The groups of clients that are shown the same view (members and viewers, say, or one group per
    /// user). ``LiveEveryone`` by default: one view for all.
    associatedtype Audience: Hashable & Sendable = LiveEveryone
    /// What the welcome tells a client about itself (`you`): its name, its role. `Never` by default:
    /// the welcome says nothing.
    associatedtype Profile: Encodable & Sendable = Never
    /// What the other clients of the hub are shown of a connected client in `presence` frames (a name, a
    /// colour). `Never` by default: the hub sends no presence frame.
    associatedtype Presence: Encodable & Sendable = Never

    /// The view of `state` that clients are shown, when every client is shown the same one.
    ///
    /// A service with audiences implements ``view(of:for:)`` instead and need not write this one.
    /// Keep it a pure function of the state: every replica of a log must compute the same view from the
    /// same state.
    func view(of state: State) -> View

    /// The view of `state` that the clients in `audience` are shown.
    ///
    /// The hub calls it at most once per version and audience, and only for audiences with a connected
    /// client (or when the server reads ``LiveHub/view(for:)``); every client of the audience shares the
    /// encoded frames. By default it returns ``view(of:)``. Keep it a pure function of its arguments.
    func view(of state: State, for audience: Audience) -> View

    /// The audience a client belongs to: called once when it is admitted (and again after a `reauth`).
    func audience(of identity: Identity) -> Audience

    /// What the welcome tells the client about itself, in its `you` member; nil leaves the member out
    /// (the default).
    func profile(of identity: Identity) -> Profile?

    /// What the hub's clients are shown of a client admitted as `identity` while it is connected (its
    /// entry in `presence` frames, under its client id); nil keeps it out of the list. Called once when
    /// it is admitted. The default is nil.
    func presence(of identity: Identity) -> Presence?

    /// How a client admitted as `identity` is named to the hub's ``LiveObserver`` (in logs, traces):
    /// nil keeps who it is out of every event (the default), so that an identity is reported only
    /// where the service decided it may be (a user id, never a token or an e-mail address it should not
    /// log). Called outside every lock, only when an observer is set: once when the client is admitted,
    /// and once per command answered.
    func observedIdentity(of identity: Identity) -> String?

    /// Turns a client's command into an action to record and apply, or refuses it.
    ///
    /// `state` is the state as it will be once every command accepted before this one is applied, so a
    /// command can be checked against it (an item that no longer exists, a full list). A refused command
    /// changes nothing and its sender gets an error frame with the message.
    ///
    /// In a cluster (several hubs on one shared log) the decision is authoritative: the hub records the
    /// action only if no other node recorded anything since the state it decided on; otherwise it reads
    /// the newer records and calls `decide` again on the newer state. So a command is acknowledged
    /// `applied` only when it was decided on the state it is applied to. Keep `decide` a pure function
    /// of its arguments: it may be called more than once for one command.
    func decide(_ command: Command, state: State, identity: Identity) -> LiveDecision<LiveAction>

    /// Decides whether a client may connect, from its hello frame and what the transport saw.
    ///
    /// Called once per connection, outside every lock of the hub; it may take its time (a database
    /// lookup). The client's commands wait until it returns.
    func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<Identity>
}

/// The one audience of a service that shows every client the same view: the default ``LiveService/Audience``.
public enum LiveEveryone: Hashable, Sendable {
    /// Every client.
    case everyone
}

extension LiveService where Audience == LiveEveryone {
    /// ``view(of:)``: every client is shown the same view.
    public func view(of state: State, for audience: LiveEveryone) -> View { view(of: state) }

    /// ``LiveEveryone/everyone``: every client is in the one audience.
    public func audience(of identity: Identity) -> LiveEveryone { .everyone }
}

extension LiveService {
    /// Stops the process with a message naming what to implement: a service implements ``view(of:)``
    /// (one view for all) or ``view(of:for:)`` (a view per audience). The hub calls only
    /// ``view(of:for:)``, so a service with audiences never reaches this.
    public func view(of state: State) -> View {
        preconditionFailure("\(Self.self) implements neither view(of:) nor view(of:for:): a LiveService implements one of them")
    }

    /// Nil: the welcome says nothing about the client.
    public func profile(of identity: Identity) -> Profile? { nil }

    /// Nil: the client is not shown in presence frames.
    public func presence(of identity: Identity) -> Presence? { nil }

    /// Nil: observers are not told who a client is.
    public func observedIdentity(of identity: Identity) -> String? { nil }
}

/// What becomes of one command: an action to record and apply, or a refusal with its reason.
public enum LiveDecision<LiveAction: Sendable>: Sendable {
    /// Record `action` in the log and apply it; the client is acknowledged once the log holds it.
    case accept(LiveAction)
    /// Change nothing; the client gets an error frame (code `rejected`) with this message.
    case reject(String)
}

/// What a client presented when it connected: its hello frame's token and parameters, and what the
/// transport saw before the first frame.
public struct LiveHandshake: Sendable, Equatable {
    /// The hello frame's `token`, if it had one.
    public var token: String?
    /// The hello frame's `params`: string values the client chose (a team name, a page's version).
    public var params: [String: String]
    /// What the adapter saw of the connection, as it chose to name it (for instance an
    /// `authorization` header, an `origin`, a remote `address`). Empty unless the adapter passes it to
    /// ``LiveHub/connect(transport:)``.
    public var transport: [String: String]

    /// Creates a handshake.
    public init(token: String? = nil, params: [String: String] = [:], transport: [String: String] = [:]) {
        self.token = token
        self.params = params
        self.transport = transport
    }
}

/// Whether ``LiveService/authenticate(_:)`` admitted a client.
public enum LiveAuthentication<Identity: Sendable>: Sendable {
    /// Admitted, as this identity, for as long as the connection lasts.
    case accepted(Identity)
    /// Admitted, as this identity, until `expires`: then the client gets an error frame (code
    /// `token_expired`) and the connection is closed with code 4419, unless a `reauth` frame with a token
    /// ``LiveService/authenticate(_:)`` accepts came before. An expiry already past is answered the same
    /// way at once (`token_expired`, 4419), so that the client knows to get new credentials.
    case acceptedUntil(Identity, expires: Date)
    /// Refused: the client gets an error frame (code `unauthorized`) with this message, and the
    /// connection is closed with code 4401.
    case refused(String)
}

/// What became of one command, as its sender is told.
public enum LiveOutcome: Sendable, Equatable {
    /// Recorded in the log (durable) and applied; the view shows it from this version on.
    case applied(version: Int)
    /// Recorded before, and not applied again: its client's number is not above the highest the log
    /// recorded for that client, or its `cid` names a command recorded before. `version` is the version
    /// that command made (for a number below the client's highest, the version the highest made: the
    /// view shows the command from there on).
    case duplicate(version: Int)
    /// Refused by ``LiveService/decide(_:state:identity:)`` with this message; nothing changed. A numbered
    /// command's refusal is recorded: the same number sent again is refused again with the same message.
    case rejected(String)
    /// Not recorded, because the log could not take it now (it failed, or the hub is closing); nothing
    /// changed, and the same command may be sent again later.
    case unavailable(String)
    /// Not taken: its client's number is not the next one (`expected`). The commands before it were
    /// not all recorded (one was unavailable, say): send them first, then this one again.
    case outOfOrder(expected: Int)
    /// Not taken: the log no longer remembers the client (unseen for longer than
    /// ``LiveOptions/clientRetention``), so it cannot tell whether the command was applied. The client
    /// starts again with a new id; its unanswered commands are not sent again.
    case clientExpired(String)
}
