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

@Test("a query typed back to what it was searches nothing new")
func sameQueryAgain() {
    let scheduler = TestScheduler()
    let model = SearchModel(catalog: ["swift", "rust"], scheduler: scheduler)
    let searches = Recorder(model.results.changes, scheduler: scheduler)

    model.query.value = "r"
    scheduler.advance(by: .milliseconds(300))
    model.query.value = "ru"
    model.query.value = "r"
    scheduler.advance(by: .milliseconds(300))
    #expect(searches.values == [["rust"]])
}
