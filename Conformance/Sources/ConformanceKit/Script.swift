import StillwaterTesting

/// The error a script makes an input fail with; its code is what the logs compare.
public struct ScriptError: Error, Equatable, Sendable {
    public var code: Int
    public init(code: Int) { self.code = code }
}

/// One step of a script, run the same way against both libraries.
public enum Step: Equatable, Sendable, CustomStringConvertible {
    /// Sends a value into input 0 or 1.
    case send(input: Int, value: Int)
    case complete(input: Int)
    case fail(input: Int, code: Int)
    /// Cancels the subscriber's subscription; the steps after it still run, and must reach nobody.
    case cancel

    public var description: String {
        switch self {
        case .send(let input, let value): "send(\(input), \(value))"
        case .complete(let input): "complete(\(input))"
        case .fail(let input, let code): "fail(\(input), \(code))"
        case .cancel: "cancel"
        }
    }
}

/// A send the subscriber makes from inside its own observer: when it receives a value `v` with
/// `v % modulus == 0`, it sends `v + offset` into `input`, at most `limit` times per run.
public struct Reentry: Equatable, Sendable, CustomStringConvertible {
    public var modulus: Int
    public var input: Int
    public var offset: Int
    public var limit: Int

    public var description: String { "reentry(v % \(modulus) == 0 -> send(\(input), v + \(offset)), at most \(limit))" }
}

/// A seeded random event script: steps against one or two inputs, and perhaps a reentrant send.
public struct Script: Sendable, CustomStringConvertible {
    public var steps: [Step]
    public var reentry: Reentry?

    public var description: String {
        (steps.map(\.description) + [reentry.map(\.description) ?? "no reentry"]).joined(separator: ", ")
    }

    /// A random script for a chain of `inputs` inputs; with a reentrant send only when `reentrant`.
    public static func random(inputs: Int, reentrant: Bool, using random: inout SeededRandom) -> Script {
        let length = Int.random(in: 0...24, using: &random)
        var steps: [Step] = []
        for _ in 0..<length {
            let input = Int.random(in: 0..<inputs, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<82: steps.append(.send(input: input, value: Int.random(in: 0..<20, using: &random)))
            case 82..<89: steps.append(.complete(input: input))
            case 89..<95: steps.append(.fail(input: input, code: Int.random(in: 1...3, using: &random)))
            default: steps.append(.cancel)
            }
        }
        var reentry: Reentry?
        if reentrant && Int.random(in: 0..<3, using: &random) == 0 {
            reentry = Reentry(
                modulus: Int.random(in: 2...5, using: &random),
                input: Int.random(in: 0..<inputs, using: &random),
                offset: Int.random(in: 1...7, using: &random),
                limit: Int.random(in: 1...4, using: &random)
            )
        }
        return Script(steps: steps, reentry: reentry)
    }
}
