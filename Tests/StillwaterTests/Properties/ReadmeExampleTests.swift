import Testing
@testable import Stillwater

/// The README's view-model example, with `print` replaced by a log, so the README stays true.
@Suite("README view model example")
struct ReadmeExampleTests {
    struct Profile: Equatable {
        var name = "Ada"
        var unread = 0
        var lastSync = 0
    }

    final class ProfileViewModel {
        let profile = MutableProperty(Profile())
        var name: MutableProperty<String> { profile.binding(\.name) }
        var unread: Property<Int> { profile.scope(\.unread) }
    }

    @Test("prints each line only when its own slice changed, and writes through the binding")
    func example() {
        let log = Box<[String]>([])
        let model = ProfileViewModel()
        let nameLine = model.name.observe { log.value.append("name: \($0)") }
        let unreadLine = model.unread.observe { log.value.append("unread: \($0)") }

        model.profile.value.lastSync = 1
        model.profile.modify { $0.unread += 2 }
        model.name.value = "Grace"
        log.value.append(model.profile.value.name)

        #expect(log.value == ["name: Ada", "unread: 0", "unread: 2", "name: Grace", "Grace"])
        withExtendedLifetime((nameLine, unreadLine)) {}
    }
}
