// A tour of Stillwater's core in one screen: a subject, an operator chain, distinctUntilChanged, and a
// view model whose output lines are printed only when their own value changed.
//
//     swift run basics

import Stillwater

print("1. A subject and an operator chain")
let readings = PublishSubject<Int>()
let chain = readings
    .map { $0 / 10 }              // tens of degrees
    .distinctUntilChanged()       // only when the band changes
    .observe { band in print("   band \(band)0s") }
for reading in [12, 15, 19, 21, 22, 35, 31] { readings.send(reading) }

print("2. Reentrancy: a send from inside an observer waits its turn")
let pings = PublishSubject<Int>()
let first = pings.observe { value in
    print("   A got \(value)")
    if value == 1 { pings.send(2) }
}
let second = pings.observe { print("   B got \($0)") }
pings.send(1)

print("3. A view model: each line is printed only when its own slice changed")
struct Dashboard: Equatable {
    var title = "Inbox"
    var unread = 0
    var lastSync = 0
}
let dashboard = MutableProperty(Dashboard())
let titleLine = dashboard.scope(\.title).observe { print("   title: \($0)") }
let unreadLine = dashboard.scope(\.unread).observe { print("   unread: \($0)") }
for tick in 1...3 { dashboard.value.lastSync = tick }      // neither line changes
dashboard.value.unread = 2
dashboard.binding(\.title).value = "Inbox (2)"

print("4. Combining streams")
let name = BehaviorSubject("Ada")
let age = BehaviorSubject(36)
let card = Observable.combineLatest(name, age).observe { print("   \($0), \($1)") }
age.send(37)

print("done")
