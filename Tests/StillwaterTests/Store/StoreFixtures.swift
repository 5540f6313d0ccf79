import Stillwater

/// The state most store tests use.
struct Tally: Equatable, Codable, Sendable {
    var count = 0
    var name = "x"
    var a = 0
    var b = 0
    var items: [String] = []
}

/// The Redux shape: one enum, one `reduce` that switches on it.
enum TallyAction: Action, Equatable, Codable, Sendable {
    case increment
    case add(Int)
    case rename(String)
    case setA(Int)
    case setB(Int)
    case append(String)

    func reduce(_ state: inout Tally) {
        switch self {
        case .increment: state.count += 1
        case .add(let amount): state.count += amount
        case .rename(let name): state.name = name
        case .setA(let value): state.a = value
        case .setB(let value): state.b = value
        case .append(let item): state.items.append(item)
        }
    }
}

/// The Delta shape: one struct per action.
struct Increment: Action, Sendable {
    var by = 1
    func reduce(_ state: inout Tally) { state.count += by }
}
