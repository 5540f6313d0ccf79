import Stillwater

/// What a search screen shows: the text typed so far, and the results for it.
final class SearchModel {
    let query = MutableProperty("")
    let results: Property<[String]>

    private let shown = MutableProperty<[String]>([])
    private let subscription: Subscription

    init(catalog: [String], scheduler: some Scheduler) {
        results = Property(shown)
        subscription = query
            .debounce(for: .milliseconds(300), scheduler: scheduler)
            .map { typed in typed.isEmpty ? [] : catalog.filter { $0.hasPrefix(typed) } }
            .bind(to: shown)
    }
}
