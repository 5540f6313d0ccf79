import Foundation

/// A JSON value whose shape the server's app chooses (what the welcome tells a client about itself,
/// an entry of the presence list), kept as text for the client's app to decode into a type of its own.
///
/// A ``LiveClient`` is generic over its view and its commands only; `you` and presence entries are
/// each app's own, so the client keeps them as JSON and the app decodes them where it reads them:
///
/// ```swift
/// import Foundation
/// import StillwaterLive
///
/// struct Person: Codable { var name: String }
/// let value = try JSONDecoder().decode(LiveJSONValue.self, from: Data(#"{"name": "Ann", "colour": 3}"#.utf8))
/// print(value, try value.decode(Person.self).name)
/// // Prints "{\"colour\":3,\"name\":\"Ann\"} Ann"
/// ```
///
/// Two values are equal when their texts are: the text is compact, with object members in sorted order,
/// so the same JSON read twice gives equal values.
public struct LiveJSONValue: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// The value as compact JSON text, object members sorted by name.
    public let text: String

    /// The JSON that `value` encodes to.
    ///
    /// - Throws: The `EncodingError` of a value that does not encode.
    public init(_ value: some Encodable) throws {
        let any = try JSONDecoder().decode(AnyJSON.self, from: try JSONEncoder().encode(value))
        text = any.text
    }

    /// Reads any JSON value.
    public init(from decoder: any Decoder) throws {
        text = try AnyJSON(from: decoder).text
    }

    /// The value decoded as `type`.
    ///
    /// - Throws: The `DecodingError` of a value that does not have `type`'s shape.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    /// The JSON text.
    public var description: String { text }
}

/// Any JSON value, read to be written again as canonical text.
private enum AnyJSON: Codable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([AnyJSON])
    case object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([AnyJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: AnyJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Compact text with sorted members; a value read from JSON always encodes.
    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data("null".utf8), as: UTF8.self)
    }
}
