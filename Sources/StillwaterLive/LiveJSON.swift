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
