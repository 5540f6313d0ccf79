import Stillwater

/// What a search screen shows: the text typed so far, and the results for it.
final class SearchModel {
    let query = MutableProperty("")
    let results: Property<[String]>

    private let shown = MutableProperty<[String]>([])

    init() {
        results = Property(shown)
    }
}
