import Stillwater

/// The dashboard's view model: one stored property fed by the server's events, and every line of the
/// dashboard a derived property of it.
///
/// Nothing here knows about output. Each property says what a line shows, as a value; the `Dashboard`
/// writes the value as text, and its render gates decide whether the line needs drawing at all.
///
/// The derived properties keep a `value` and are computed from one state at a time: `health`, made from
/// the error rate and the latency, is computed once per event that changes either of them, from the new
/// state only, never from a new error rate and an old latency.
final class DashboardViewModel {
    /// The one stored value. Private: only the event feed writes it. Events are not a property, so they
    /// are folded into one (scan) and written to it (bind).
    private let server = MutableProperty(ServerState())
    private let feeding: Subscription

    /// The state, read-only, for whoever wants all of it.
    let state: Property<ServerState>

    /// The number of requests served. A scope: told only when the count changed, so heartbeats and
    /// users coming and going never reach it.
    let requests: Property<Int>
    /// The share of the last `ServerState.window` requests that failed, in whole percent (a select: told
    /// only when the percentage changed).
    let errorPercent: Property<Int>
    /// The 90th percentile of the last `ServerState.window` latencies, in milliseconds; `nil` before the
    /// first request.
    let latency: Property<Int?>
    /// Who is online.
    let usersOnline: Property<Set<String>>
    /// The running version.
    let version: Property<String>
    /// A verdict from the error rate and the latency of the same state (`Property.combine`).
    let health: Property<Health>
    /// One sentence about everything, sent only once the feed has been quiet for `quietTime`.
    let summary: Observable<String>

    /// A view model that applies every event of `feed`, and debounces its summary on `scheduler`.
    init(feed: some ObservableType<ServerEvent>, quietTime: Duration, scheduler: some Scheduler) {
        state = server.asProperty()
        feeding = feed.scan(ServerState()) { state, event in state.applying(event) }.bind(to: server)

        requests = server.scope(\.requests)
        errorPercent = server.select { state in
            let failures = state.recentFailures
            return failures.isEmpty ? 0 : (failures.count { $0 } * 100 + failures.count / 2) / failures.count
        }
        latency = server.select { state in
            let latencies = state.recentLatencies.sorted()
            return latencies.isEmpty ? nil : latencies[min(latencies.count * 9 / 10, latencies.count - 1)]
        }
        usersOnline = server.scope(\.users)
        version = server.scope(\.version)
        health = Property.combine(errorPercent, latency) { percent, latency in
            switch (percent, latency.map(Speed.init(milliseconds:))) {
            case (20..., _): .failing
            case (5..., _), (_, .slow?): .degraded
            default: .healthy
            }
        }
        summary = server.map { state in
            "\(state.requests) requests, \(state.failures) failed, \(state.users.count) online, v\(state.version)"
        }
        .debounce(for: quietTime, scheduler: scheduler)
    }
}

/// How fast requests are, judged by the 90th percentile of their latencies.
enum Speed: String {
    case fast, ok, slow

    /// The speed of a 90th percentile of `milliseconds`.
    init(milliseconds: Int) {
        self = switch milliseconds {
        case ..<100: .fast
        case ..<300: .ok
        default: .slow
        }
    }
}

/// The dashboard's verdict on the server.
enum Health: String {
    case healthy, degraded
    case failing = "failing: too many errors"
}
