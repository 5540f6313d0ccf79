import Foundation

/// The JSON encoding of the values frames carry (views, fields, list patches): Foundation's encoder,
/// with keys sorted (the same view is the same text on every node and every run) and slashes left as
/// they are.
enum LiveJSON {
    /// `value` as JSON bytes.
    static func data<Value: Encodable>(of value: Value) throws -> Data {
        // A new encoder per call: it holds options only, and callers run on many threads at once.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Whether `text` is one JSON value (an object, an array, a string, a number, `true`, `false` or
    /// `null`), so that it can be written into a frame as it is.
    static func isValid(_ text: String) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
    }

    /// `value` as JSON text.
    static func text<Value: Encodable>(of value: Value) throws -> String {
        String(decoding: try data(of: value), as: UTF8.self)
    }
}

/// Writes the envelopes of server frames: keys, strings, integers and JSON text made elsewhere, into one
/// growing string.
struct LiveJSONWriter {
    private(set) var text = ""

    init(capacity: Int = 64) { text.reserveCapacity(capacity) }

    /// Appends `json` as it is (a fragment the caller made valid).
    mutating func raw(_ json: String) { text += json }

    /// Appends `value` as a JSON integer.
    mutating func int(_ value: Int) { text += String(value) }

    /// Appends `value` as a JSON string, escaped (quotes, backslashes and control characters).
    mutating func string(_ value: String) {
        text += "\""
        var plainStart = value.unicodeScalars.startIndex
        let scalars = value.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            let escape: String?
            switch scalar {
            case "\"": escape = "\\\""
            case "\\": escape = "\\\\"
            case "\n": escape = "\\n"
            case "\r": escape = "\\r"
            case "\t": escape = "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escape = nil
            }
            if let escape {
                text.unicodeScalars.append(contentsOf: scalars[plainStart..<index])
                text += escape
                plainStart = scalars.index(after: index)
            }
            index = scalars.index(after: index)
        }
        text.unicodeScalars.append(contentsOf: scalars[plainStart..<scalars.endIndex])
        text += "\""
    }

    /// Appends `,"key":` (or `"key":` when `first`).
    mutating func key(_ key: String, first: Bool = false) {
        if !first { text += "," }
        string(key)
        text += ":"
    }
}

// MARK: Problems, in the protocol's words

extension LiveJSON {
    /// Where in a JSON value a coding path points, as a client would write it: `command.add.text`,
    /// `items[2].price`; empty for the value itself.
    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }

    /// The kind of JSON value a decoder wanted when it read `type`: "a string", "an integer", "an
    /// object"…; nil for a type of the app's (never its Swift name, which means nothing to a client in
    /// another language).
    static func kind(of type: Any.Type) -> String? {
        switch type {
        case is String.Type, is Character.Type: "a string"
        case is Bool.Type: "true or false"
        case is any BinaryInteger.Type: "an integer"
        case is any BinaryFloatingPoint.Type, is Decimal.Type: "a number"
        case is [String: Any].Type, is [String: any Sendable].Type: "an object"
        case is [Any].Type, is [any Sendable].Type: "an array"
        default: nil
        }
    }

    /// Why a value did not decode, in one short line of the protocol's words: where (a path such as
    /// `command.add.text`) and what was expected. It names no Swift type and repeats no text of the
    /// decoder's or the app's, so it is safe to send to a client.
    static func describe(decoding error: any Error) -> String {
        let (path, problem): ([any CodingKey], String)
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            (path, problem) = (context.codingPath, "missing \"\(key.stringValue.prefix(64))\"")
        case DecodingError.typeMismatch(let type, let context):
            (path, problem) = (context.codingPath, kind(of: type).map { "expected \($0)" } ?? "not a value accepted here")
        case DecodingError.valueNotFound(let type, let context):
            (path, problem) = (context.codingPath, "expected \(kind(of: type) ?? "a value"), found null")
        case DecodingError.dataCorrupted(let context):
            // The context's text may name Swift types ("does not fit in Int") or quote the app's own
            // decoder: only its place is said.
            // Foundation's decoder reports a number that is not whole or out of range where an integer
            // was wanted the same way as broken JSON, with no path.
            (path, problem) = (context.codingPath,
                               context.codingPath.isEmpty ? "not valid JSON, or a number not whole or out of range" : "not a value accepted here")
        default:
            (path, problem) = ([], "not a value accepted here")
        }
        let place = Self.path(path)
        return String((place.isEmpty ? problem : "at \(place.prefix(120)): \(problem)").prefix(200))
    }

    /// Why a value did not encode, in one short line of the protocol's words: where, and what (a NaN or
    /// an infinity, which JSON cannot hold). Safe to send to a client.
    static func describe(encoding error: any Error) -> String {
        guard case EncodingError.invalidValue(let value, let context) = error else {
            return "its encoder failed"
        }
        let place = path(context.codingPath)
        let problem = switch value {
        case let number as Double where number.isNaN: "NaN is not a JSON number"
        case let number as Float where number.isNaN: "NaN is not a JSON number"
        case let number as Double where number.isInfinite: "infinity is not a JSON number"
        case let number as Float where number.isInfinite: "infinity is not a JSON number"
        default: "a value its encoder refused"
        }
        return String((place.isEmpty ? problem : "at \(place.prefix(120)): \(problem)").prefix(200))
    }
}
