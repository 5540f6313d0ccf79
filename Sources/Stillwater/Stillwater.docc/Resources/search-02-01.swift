import Stillwater
import StillwaterTesting
import Testing

@Test("searches once the typing pauses")
func searchesAfterAPause() {
    let scheduler = TestScheduler()
    let model = SearchModel(catalog: ["swift", "swiftui", "rust"], scheduler: scheduler)
    #expect(model.results.value == [])
}
