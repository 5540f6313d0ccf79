/// Any JSON value, kept as it was read, so that fields the program does not know survive a save.
///
/// Numbers are kept as integers when they are whole and fit in `Int` (however they were written: `12`,
/// `12.0` and `1.2e1` are all `.integer(12)`), otherwise as `Double` (a number with more digits than a
/// `Double` holds is rounded to the nearest one). So a value written back reads back the same.
///
/// ```swift
/// import Foundation
///
/// let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"tags": ["home", 2]}"#.utf8))
/// print(value)
/// // Prints "{\"tags\": [\"home\", 2]}"
/// ```
public enum JSONValue: Codable, Hashable, Sendable, CustomStringConvertible {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A whole number that fits in `Int`.
    case integer(Int)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object. Its keys are written sorted.
    case object([String: JSONValue])

    /// Reads whatever JSON value `decoder` holds.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            // A number written with a fraction or exponent that is still whole (1.2e3) is an integer,
            // so that it reads back as the same kind of value once written without them.
            self = Int(exactly: value).map(JSONValue.integer) ?? .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Writes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as compact JSON-like text, keys sorted (for messages and tests).
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .number(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .object(let fields):
            "{" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
        }
    }

    /// What kind of value this is, in words: `a JSON array`, `a string`.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .number: "a number"
        case .string: "a string"
        case .array: "a JSON array"
        case .object: "a JSON object"
        }
    }
}

extension JSONValue {
    /// The value as pretty-printed JSON: two spaces of indent per level, object keys sorted and written
    /// `"key" : value`, strings escaped only where JSON requires it. Reading the text back gives this value.
    ///
    /// ```swift
    /// print(JSONValue.object(["b": .array([.integer(1)]), "a": .string("x")]).prettyJSON)
    /// // Prints "{", "  \"a\" : \"x\",", "  \"b\" : [", "    1", "  ]", "}"
    /// ```
    ///
    /// - Complexity: O(n) in the size of the text, plus sorting each object's keys.
    public var prettyJSON: String {
        var bytes: [UInt8] = []
        write(to: &bytes, indent: 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the value's pretty-printed JSON (see ``prettyJSON``) to `bytes`, as UTF-8.
    func write(to bytes: inout [UInt8], indent: Int) {
        switch self {
        case .null: bytes += "null".utf8
        case .bool(let value): bytes += (value ? "true" : "false").utf8
        case .integer(let value): bytes += String(value).utf8
        // A finite Double's description is valid JSON (`1.5`, `1e+300`, `-0.0`); JSON has no other kind.
        case .number(let value): bytes += (value.isFinite ? value.description : "null").utf8
        case .string(let value): Self.write(string: value, to: &bytes)
        case .array(let values):
            guard !values.isEmpty else { bytes += "[]".utf8; return }
            bytes += "[\n".utf8
            for (index, value) in values.enumerated() {
                bytes += repeatElement(UInt8(ascii: " "), count: indent + 2)
                value.write(to: &bytes, indent: indent + 2)
                bytes += (index == values.count - 1 ? "\n" : ",\n").utf8
            }
            bytes += repeatElement(UInt8(ascii: " "), count: indent)
            bytes.append(UInt8(ascii: "]"))
        case .object(let fields):
            guard !fields.isEmpty else { bytes += "{}".utf8; return }
            bytes += "{\n".utf8
            let keys = fields.keys.sorted()
            for (index, key) in keys.enumerated() {
                bytes += repeatElement(UInt8(ascii: " "), count: indent + 2)
                Self.write(string: key, to: &bytes)
                bytes += " : ".utf8
                fields[key]!.write(to: &bytes, indent: indent + 2)
                bytes += (index == keys.count - 1 ? "\n" : ",\n").utf8
            }
            bytes += repeatElement(UInt8(ascii: " "), count: indent)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends `string` as a JSON string: quotes, backslashes and control characters escaped, the rest
    /// as UTF-8.
    private static func write(string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += "\\\"".utf8
            case UInt8(ascii: "\\"): bytes += "\\\\".utf8
            case UInt8(ascii: "\n"): bytes += "\\n".utf8
            case UInt8(ascii: "\r"): bytes += "\\r".utf8
            case UInt8(ascii: "\t"): bytes += "\\t".utf8
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += "\\u00".utf8
                bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
