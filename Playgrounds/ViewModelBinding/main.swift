// A command-line dashboard bound to a view model. Run it with `swift run view-model-binding`
// (`--seed N` for another run of events).
//
// A simulated server sends bursts of events. A view model folds them into one MutableProperty and
// derives every line of the dashboard from it as a derived property: scopes and selects (told only when
// their value changed), a combination of two of them (`Property.combine`: computed once per state, never
// from a mix of an old and a new one), and a summary debounced on a dispatch queue, so it speaks only
// once the feed pauses. The dashboard writes each value as text; each line sits behind a RenderGate and
// is rewritten only when its text changed. The table at the end counts the updates made and skipped.
//
// The run is repeatable: the events come from a seeded generator, each burst is sent in one go on the
// dashboard's queue (so the debounce timer cannot fire inside a burst), and the next burst waits until
// the summary of the last one was shown.

import Dispatch
import Foundation
import Stillwater

let seed = CommandLine.arguments.firstIndex(of: "--seed")
    .flatMap { CommandLine.arguments.indices.contains($0 + 1) ? UInt64(CommandLine.arguments[$0 + 1]) : nil } ?? 42
let inPlace = isatty(STDOUT_FILENO) == 1
let bursts = simulatedBursts(seed: seed, bursts: 10)

/// Everything (events, the debounce timer, drawing) happens on this one serial queue.
let queue = DispatchQueue(label: "dashboard")
let summaryShown = DispatchSemaphore(value: 0)
let feed = PublishSubject<ServerEvent>()

let (dashboard, model) = queue.sync {
    let model = DashboardViewModel(feed: feed, quietTime: .milliseconds(80), scheduler: .queue(queue))
    let dashboard = Dashboard(inPlace: inPlace)
    print("A dashboard fed by \(bursts.joined().count) simulated server events in \(bursts.count) bursts (seed \(seed)).")
    dashboard.add("requests", model.requests) { String($0) }
    dashboard.add("error rate", model.errorPercent) { "\($0)% of the last \(ServerState.window)" }
    dashboard.add("latency", model.latency) { $0.map { Speed(milliseconds: $0).rawValue } ?? "no requests yet" }
    dashboard.add("online", model.usersOnline) { users in
        users.isEmpty ? "nobody" : "\(users.count) (\(users.sorted().joined(separator: ", ")))"
    }
    dashboard.add("version", model.version) { "v" + $0 }
    dashboard.add("health", model.health, text: \.rawValue)
    dashboard.add("summary", model.summary, text: { $0 }) { summaryShown.signal() }
    return (dashboard, model)
}

/// Waits until the debounced summary of what was sent so far has been shown.
func waitForSummary() {
    if summaryShown.wait(timeout: .now() + 5) == .timedOut {
        print("(the summary did not arrive within 5 seconds; the machine is very busy)")
    }
}

waitForSummary()   // the summary of the empty state, sent when the dashboard subscribed
for (number, burst) in bursts.enumerated() {
    queue.sync {
        dashboard.note("burst \(number + 1): \(burst.count) events")
        for event in burst {
            feed.send(event)
            // On a terminal, slow down enough to watch lines change; the queue stays busy, so the
            // debounce still sees one burst.
            if inPlace { Thread.sleep(forTimeInterval: 0.03) }
        }
    }
    waitForSummary()
}

queue.sync {
    feed.complete()
    let state = model.state.value
    print("")
    let events = bursts.joined().count
    print("\(events) events made \(events + 1) states (\(state.heartbeats) were heartbeats that no line shows).")
    print("Each line is a derived property: it heard only of changes of its own value, computed once per")
    print("state (health from the error rate and the latency of the same state). Then each gate skipped the")
    print("values that would redraw the same text, such as a new latency that is still \"fast\". The")
    print("summary, debounced, spoke once per pause: once per burst.")
    print("")
    print(dashboard.report())
}
