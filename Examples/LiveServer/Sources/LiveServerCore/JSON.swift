/// JSON text written directly, for the frames the server sends many times a second.
///
/// The frames have a handful of fixed shapes, so writing their text directly costs a fraction of what a
/// general encoder does (no containers, no boxing of values, no generic lookups at run time). The output
/// is standard JSON: strings are escaped as RFC 8259 requires, numbers are integers.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    /// The text written so far.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends `literal` as it is (punctuation and keys the caller knows are valid JSON).
    mutating func raw(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` in decimal.
    mutating func int(_ value: Int) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            // The magnitude of Int.min does not fit an Int; written digit by digit from the UInt.
            appendDigits(value.magnitude)
        } else {
            appendDigits(UInt(value))
        }
    }

    private mutating func appendDigits(_ value: UInt) {
        if value >= 10 { appendDigits(value / 10) }
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// Appends `value` as a JSON string: quoted, with `"`, `\` and control characters escaped.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case UInt8(ascii: "\n"): raw("\\n")
            case UInt8(ascii: "\r"): raw("\\r")
            case UInt8(ascii: "\t"): raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0xF))
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `true` or `false`.
    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// Appends `[a,b,…]` of integers.
    mutating func ints(_ values: [Int]) {
        raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { raw(",") }
            int(value)
        }
        raw("]")
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}

/// A parsed JSON value: what ``JSONReader`` reads.
enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    var string: String? { if case .string(let value) = self { value } else { nil } }
    var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }

    /// The value as an integer, when it is a number with no fraction that fits an `Int`.
    var int: Int? {
        guard case .number(let value) = self, value.rounded() == value, abs(value) < 9.0e15 else { return nil }
        return Int(value)
    }
}

/// A small, strict JSON parser (RFC 8259) for frames: objects, arrays, strings with every escape, numbers,
/// `true`, `false`, `null`; nesting at most ``maxDepth`` deep. Anything else is an error, never a trap.
struct JSONReader {
    struct Failure: Error {}

    static let maxDepth = 32

    private let bytes: [UInt8]
    private var index = 0

    /// Parses `text`, which must hold one JSON value and nothing but white space around it.
    static func parse(_ text: String) throws(Failure) -> JSONValue {
        var reader = JSONReader(bytes: Array(text.utf8))
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.index == reader.bytes.count else { throw Failure() }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard depth < Self.maxDepth else { throw Failure() }
        skipSpace()
        guard index < bytes.count else { throw Failure() }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if peek(UInt8(ascii: "}")) { return .object(members) }
            repeat {
                skipSpace()
                let key = try string()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                members[key] = try value(depth: depth + 1)
                skipSpace()
            } while peek(UInt8(ascii: ","))
            try expect(UInt8(ascii: "}"))
            return .object(members)
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONValue] = []
            skipSpace()
            if peek(UInt8(ascii: "]")) { return .array(elements) }
            repeat {
                elements.append(try value(depth: depth + 1))
                skipSpace()
            } while peek(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"))
            return .array(elements)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try word("true"); return .bool(true)
        case UInt8(ascii: "f"): try word("false"); return .bool(false)
        case UInt8(ascii: "n"): try word("null"); return .null
        default: return .number(try number())
        }
    }

    /// Consumes `byte` if it is next.
    private mutating func peek(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        guard peek(byte) else { throw Failure() }
    }

    private mutating func word(_ literal: StaticString) throws(Failure) {
        let matches = literal.withUTF8Buffer { word in
            index + word.count <= bytes.count && bytes[index..<index + word.count].elementsEqual(word)
        }
        guard matches else { throw Failure() }
        index += literal.utf8CodeUnitCount
    }

    private mutating func number() throws(Failure) -> Double {
        let start = index
        // The common case, an integer of up to 15 digits, is read directly.
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        let digitsStart = index
        var value = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9"), index - digitsStart < 15 {
            value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        let digits = index - digitsStart
        let next = index < bytes.count ? bytes[index] : 0
        let ended = !(next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9")) && next != UInt8(ascii: ".")
            && next != UInt8(ascii: "e") && next != UInt8(ascii: "E")
        if digits > 0, ended {
            // JSON allows no leading zeros.
            guard digits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { throw Failure() }
            return Double(negative ? -value : value)
        }
        index = start
        return try slowNumber()
    }

    /// A number with a fraction, an exponent or many digits, checked against JSON's grammar.
    private mutating func slowNumber() throws(Failure) -> Double {
        let start = index
        func isNumberByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                 UInt8(ascii: "e"), UInt8(ascii: "E"): true
            default: false
            }
        }
        while index < bytes.count, isNumberByte(bytes[index]) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        // JSON's grammar is narrower than Double's parser: no leading +, no leading zeros, digits around '.'.
        guard let first = text.utf8.first, first != UInt8(ascii: "+"), let value = Double(text), value.isFinite,
              !text.hasPrefix("."), !text.hasPrefix("-."), !text.hasSuffix("."), !text.contains(".e"), !text.contains(".E")
        else { throw Failure() }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        if digits.count > 1, digits.hasPrefix("0"), !digits.hasPrefix("0.") && !digits.hasPrefix("0e") && !digits.hasPrefix("0E") {
            throw Failure()
        }
        return value
    }

    private mutating func string() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""))
        // The common case, a string without escapes, is taken as one slice.
        var end = index
        while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"), bytes[end] >= 0x20 {
            end += 1
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            guard let text = String(validating: bytes[index..<end], as: UTF8.self) else { throw Failure() }
            index = end + 1
            return text
        }
        var scalars: [UInt8] = []
        while true {
            guard index < bytes.count else { throw Failure() }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: scalars, as: UTF8.self) else { throw Failure() }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw Failure() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        // A high surrogate must be followed by an escaped low one.
                        guard peek(UInt8(ascii: "\\")), peek(UInt8(ascii: "u")) else { throw Failure() }
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw Failure() }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw Failure() }
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default: throw Failure()
                }
            case 0..<0x20: throw Failure()
            default: scalars.append(byte)
            }
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw Failure() }
        var code: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Failure()
            }
            code = code << 4 | UInt32(digit)
        }
        index += 4
        return code
    }
}
