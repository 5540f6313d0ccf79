// The simulated server: a seeded, repeatable stream of events, and the state they add up to.

/// Something the server reports.
enum ServerEvent: Sendable {
    /// A request was served in `milliseconds`; `failed` when it answered with an error.
    case request(path: String, milliseconds: Int, failed: Bool)
    /// A user connected.
    case joined(String)
    /// A user disconnected.
    case left(String)
    /// A new version went live.
    case deployed(version: String)
    /// The server is alive; nothing a dashboard shows changes.
    case heartbeat
}

/// What the events add up to: the view model's one stored value.
struct ServerState: Equatable, Sendable {
    /// How many recent requests the error rate and the latency look at.
    static let window = 10

    var requests = 0
    var failures = 0
    /// The latencies of the last `window` requests, newest last.
    var recentLatencies: [Int] = []
    /// Whether each of the last `window` requests failed, newest last.
    var recentFailures: [Bool] = []
    var users: Set<String> = []
    var version = "2.3.0"
    var heartbeats = 0

    /// The state after `event`.
    func applying(_ event: ServerEvent) -> ServerState {
        var next = self
        switch event {
        case .request(_, let milliseconds, let failed):
            next.requests += 1
            if failed { next.failures += 1 }
            next.recentLatencies = Array((recentLatencies + [milliseconds]).suffix(ServerState.window))
            next.recentFailures = Array((recentFailures + [failed]).suffix(ServerState.window))
        case .joined(let user): next.users.insert(user)
        case .left(let user): next.users.remove(user)
        case .deployed(let version): next.version = version
        case .heartbeat: next.heartbeats += 1
        }
        return next
    }
}

/// A small, fast, seeded generator (SplitMix64), so every run with the same seed sees the same events.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// The events of one run: `bursts` groups of a few events each, as a busy server sends them.
func simulatedBursts(seed: UInt64, bursts: Int) -> [[ServerEvent]] {
    var random = SeededGenerator(seed: seed)
    let paths = ["/api/orders", "/api/users", "/health", "/api/search"]
    let people = ["ada", "grace", "alan", "edsger", "barbara", "ken"]
    var online: Set<String> = []
    var minor = 3
    return (0..<bursts).map { burst in
        (0..<Int.random(in: 5...10, using: &random)).map { _ in
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<60:
                // Slow, failing stretches in the middle of the run, so the health line has news.
                let troubled = (3...4).contains(burst)
                let milliseconds = Int.random(in: troubled ? 150...900 : 20...140, using: &random)
                let failed = Int.random(in: 0..<100, using: &random) < (troubled ? 35 : 3)
                return .request(path: paths.randomElement(using: &random)!, milliseconds: milliseconds, failed: failed)
            case 60..<75:
                let person = people.randomElement(using: &random)!
                online.insert(person)
                return .joined(person)
            case 75..<85 where !online.isEmpty:
                let person = online.sorted().randomElement(using: &random)!
                online.remove(person)
                return .left(person)
            case 85..<88:
                minor += 1
                return .deployed(version: "2.\(minor).0")
            default:
                return .heartbeat
            }
        }
    }
}
