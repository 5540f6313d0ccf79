import Stillwater

/// What a search screen shows: the text typed so far, and the results for it.
final class SearchModel {
    let query = MutableProperty("")
}
