import Stillwater
let s = PublishSubject<Int>()
let sub = s.map { $0 * 2 }.observe { print($0) }
s.send(1)
