import Stillwater
import StillwaterTesting
import Testing

@Test("searches once the typing pauses")
func searchesAfterAPause() {
    let scheduler = TestScheduler()
    let model = SearchModel(catalog: ["swift", "swiftui", "rust"], scheduler: scheduler)

    model.query.value = "s"
    scheduler.advance(by: .milliseconds(100))
    model.query.value = "sw"
    scheduler.advance(by: .milliseconds(299))
    #expect(model.results.value == [])

    scheduler.advance(by: .milliseconds(1))
    #expect(model.results.value == ["swift", "swiftui"])
}
