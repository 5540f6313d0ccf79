import Stillwater

/// The dashboard's view model: one stored property fed by the server's events, and every line of the
/// dashboard derived from it.
///
/// Nothing here knows about output. Each derived stream says what a line shows; the `Dashboard` decides
/// how a line is drawn, and its render gates decide whether it needs drawing at all.
final class DashboardViewModel {
    /// The one stored value. Private: only the event feed writes it.
    private let server = MutableProperty(ServerState())
    private let feeding: Subscription

    /// The state, read-only, for whoever wants all of it.
    let state: Property<ServerState>

    /// The number of requests served. A scope: told only when the count changed, so heartbeats and
    /// users coming and going never reach it.
    let requests: Property<Int>
    /// The share of the last `ServerState.window` requests that failed, in whole percent.
    let errorRate: Observable<String>
    /// How fast the last `ServerState.window` requests were (their 90th percentile), as a word.
    let latency: Observable<String>
    /// How many users are online.
    let usersOnline: Observable<String>
    /// The running version.
    let version: Property<String>
    /// A verdict from the error rate and the latency together (combineLatest).
    let health: Observable<String>
    /// One sentence about everything, sent only once the feed has been quiet for `quietTime`.
    let summary: Observable<String>

    /// A view model that applies every event of `feed`, and debounces its summary on `scheduler`.
    init(feed: some ObservableType<ServerEvent>, quietTime: Duration, scheduler: some Scheduler) {
        state = Property(server)
        // The feed folds into the state: scan keeps the running total, bind writes it to the property.
        feeding = feed.scan(ServerState()) { state, event in state.applying(event) }.bind(to: server)

        requests = server.scope(\.requests)
        let errorPercent = server.scope(\.recentFailures).map { failures in
            failures.isEmpty ? 0 : (failures.count { $0 } * 100 + failures.count / 2) / failures.count
        }
        errorRate = errorPercent.map { "\($0)% of the last \(ServerState.window)" }

        latency = server.scope(\.recentLatencies).map(Self.speed)
        usersOnline = server.scope(\.users).map { users in
            users.isEmpty ? "nobody" : "\(users.count) (\(users.sorted().joined(separator: ", ")))"
        }
        version = server.scope(\.version)
        health = Observable.combineLatest(errorPercent, latency).map { percent, speed in
            switch (percent, speed) {
            case (20..., _): "failing: too many errors"
            case (5..., _), (_, "slow"): "degraded"
            default: "healthy"
            }
        }
        summary = server.map { state in
            "\(state.requests) requests, \(state.failures) failed, \(state.users.count) online, v\(state.version)"
        }
        .debounce(for: quietTime, scheduler: scheduler)
    }

    /// A word for the 90th percentile of `latencies`.
    private static func speed(_ latencies: [Int]) -> String {
        guard !latencies.isEmpty else { return "no requests yet" }
        let p90 = latencies.sorted()[min(latencies.count * 9 / 10, latencies.count - 1)]
        return switch p90 {
        case ..<100: "fast"
        case ..<300: "ok"
        default: "slow"
        }
    }
}
