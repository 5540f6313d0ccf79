/// A ``LiveClientTransport`` to a hub in the same process: each ``connect()`` makes a
/// ``LiveConnection`` of the hub and moves its frames as an adapter would, without a socket. For tests
/// of a service through its real client, and for programs that show a hub's view in the same process.
///
/// ```swift
/// import StillwaterLive
///
/// struct Count: Codable, Sendable { var value = 0 }
/// struct Bump: Action, Codable, Sendable { func reduce(_ state: inout Count) { state.value += 1 } }
/// struct CountView: LiveView, Decodable {
///     var value: Int
///     static let liveFields: [LiveField<CountView>] = [.value("value", \.value)]
/// }
/// struct Counter: LiveService {
///     func view(of state: Count) -> CountView { CountView(value: state.value) }
///     func decide(_ command: String, state: Count, identity: String) -> LiveDecision<Bump> { .accept(Bump()) }
///     func authenticate(_ handshake: LiveHandshake) async -> LiveAuthentication<String> { .accepted("guest") }
/// }
/// let hub = try await LiveHub.open(Counter(), log: MemoryJournal<LiveLogState<Count>, LiveEntry<Bump>>(), initial: Count())
/// let ticking = Task { await hub.run() }
/// let client = LiveClient<CountView, String>(transport: LiveInProcessTransport(hub: hub))
/// print(try await client.send("bump"))
/// // Prints "applied(version: 1)"
/// await client.close()
/// ticking.cancel()
/// ```
///
/// Cost: one task per open connection, which writes the connection's frames into the channel.
public struct LiveInProcessTransport<Service: LiveService>: LiveClientTransport {
    /// The hub each connection is made to.
    public let hub: LiveHub<Service>
    /// What the transport tells the hub it saw (``LiveHandshake/transport``), for every connection.
    public let transport: [String: String]

    /// A transport to `hub`.
    ///
    /// - Parameters:
    ///   - hub: The hub to connect to.
    ///   - transport: What each connection's handshake says the transport saw (an `address`, say).
    public init(hub: LiveHub<Service>, transport: [String: String] = [:]) {
        self.hub = hub
        self.transport = transport
    }

    /// Opens a new connection to the hub. Never throws: a closed hub answers the client with close 1001.
    public func connect() async throws -> LiveClientChannel {
        let connection = hub.connect(transport: transport)
        let (incoming, sink) = AsyncStream.makeStream(of: LiveTransportEvent.self)
        let writer = Task {
            while let write = await connection.nextBatch() {
                switch write {
                case .frames(let frames): for frame in frames { sink.yield(.text(frame.text)) }
                case .close(let code, let reason): sink.yield(.closed(code: code.rawValue, reason: reason))
                }
            }
            sink.finish()
        }
        return LiveClientChannel(incoming: incoming, send: { connection.receive($0) }, close: {
            writer.cancel()
            connection.transportClosed()
            sink.finish()
        })
    }
}
