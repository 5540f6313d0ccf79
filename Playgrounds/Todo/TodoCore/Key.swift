/// A key pressed in the terminal, decoded from the bytes a terminal sends in raw mode.
public enum Key: Hashable, Sendable, CustomStringConvertible {
    /// A printable character (any script, emoji included).
    case character(Character)
    /// A letter pressed with Control: `.control("c")` is Ctrl-C.
    case control(Character)
    /// Return or Enter.
    case enter
    /// Tab.
    case tab
    /// Backspace (the terminal's DEL or Ctrl-H).
    case backspace
    /// Delete (forward delete).
    case delete
    /// Escape on its own.
    case escape
    /// The arrow keys.
    case up, down, left, right
    /// The arrow keys with Shift.
    case shiftUp, shiftDown
    /// Home and End.
    case home, end
    /// Page Up and Page Down.
    case pageUp, pageDown
    /// A sequence this decoder does not know (a function key, say); ignored by the screen.
    case unknown(String)

    /// The key's name, as in help texts: `a`, `Ctrl-C`, `Enter`, `Up`.
    public var description: String {
        switch self {
        case .character(" "): "Space"
        case .character(let character): String(character)
        case .control(let letter): "Ctrl-\(letter.uppercased())"
        case .enter: "Enter"
        case .tab: "Tab"
        case .backspace: "Backspace"
        case .delete: "Delete"
        case .escape: "Esc"
        case .up: "Up"
        case .down: "Down"
        case .left: "Left"
        case .right: "Right"
        case .shiftUp: "Shift-Up"
        case .shiftDown: "Shift-Down"
        case .home: "Home"
        case .end: "End"
        case .pageUp: "PageUp"
        case .pageDown: "PageDown"
        case .unknown(let sequence): "unknown \(sequence.debugDescription)"
        }
    }
}

/// Turns the bytes a terminal sends in raw mode into ``Key``s: UTF-8 characters, control keys, and the
/// escape sequences of the arrow and editing keys (in both the `ESC [` and the `ESC O` forms).
///
/// Bytes may arrive split anywhere (a read can end inside a sequence or a character): the decoder keeps
/// an unfinished sequence until the next ``feed(_:)``. A lone Escape cannot be told from the start of a
/// sequence until time passes, so the caller calls ``flush()`` when no byte came for a moment.
///
/// ```swift
/// var decoder = KeyDecoder()
/// print(decoder.feed(Array("a\u{1B}[A\u{1B}".utf8)), decoder.flush())
/// // Prints "[a, Up] [Esc]"
/// ```
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    /// A decoder with nothing pending.
    public init() {}

    /// Whether bytes of an unfinished key are waiting.
    public var hasPending: Bool { !pending.isEmpty }

    /// The keys completed by `bytes` (and the bytes before them).
    public mutating func feed(_ bytes: [UInt8]) -> [Key] {
        pending += bytes
        var keys: [Key] = []
        var start = 0
        while start < pending.count {
            guard let (key, length) = Self.decode(pending[start...]) else { break }
            keys.append(key)
            start += length
        }
        pending.removeFirst(start)
        return keys
    }

    /// The keys waiting for more bytes, taken as they are: a lone `ESC` becomes ``Key/escape``, an
    /// unfinished sequence ``Key/unknown(_:)``; a partial UTF-8 character is dropped.
    public mutating func flush() -> [Key] {
        defer { pending.removeAll() }
        guard let first = pending.first else { return [] }
        if first == 0x1B {
            return pending.count == 1 ? [.escape] : [.unknown(String(decoding: pending, as: UTF8.self))]
        }
        return []
    }

    /// The key at the start of `bytes` and how many bytes it took, or `nil` when more bytes are needed.
    private static func decode(_ bytes: ArraySlice<UInt8>) -> (Key, Int)? {
        let first = bytes[bytes.startIndex]
        switch first {
        case 0x1B: return decodeEscape(bytes)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x09: return (.tab, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x01...0x1A: return (.control(Character(Unicode.Scalar(first + 0x60))), 1)
        case 0x00, 0x1C...0x1F: return (.unknown(String(Unicode.Scalar(first))), 1)
        default: return decodeCharacter(bytes)
        }
    }

    private static func decodeCharacter(_ bytes: ArraySlice<UInt8>) -> (Key, Int)? {
        let first = bytes[bytes.startIndex]
        let length = switch first {
        case 0x00..<0x80: 1
        case 0xC0..<0xE0: 2
        case 0xE0..<0xF0: 3
        case 0xF0..<0xF8: 4
        default: 0   // a continuation byte or an invalid one
        }
        guard length > 0 else { return (.unknown(String(format: first)), 1) }
        guard bytes.count >= length else { return nil }
        let scalars = String(decoding: bytes.prefix(length), as: UTF8.self)
        guard let character = scalars.first, scalars.count == 1, !scalars.contains("\u{FFFD}") else {
            return (.unknown(String(format: first)), 1)
        }
        return (.character(character), length)
    }

    private static func decodeEscape(_ bytes: ArraySlice<UInt8>) -> (Key, Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let second = bytes[start + 1]
        if second == 0x4F {   // ESC O x: arrows and Home/End in application mode
            guard bytes.count >= 3 else { return nil }
            return (key(final: bytes[start + 2], parameters: []) ?? .unknown(text(bytes.prefix(3))), 3)
        }
        guard second == 0x5B else { return (.escape, 1) }   // ESC then another key: Escape, then that key
        // ESC [ parameters final: parameters are digits and ';', the final byte is 0x40...0x7E.
        var index = start + 2
        while index < bytes.endIndex, (0x30...0x3F).contains(bytes[index]) { index += 1 }
        guard index < bytes.endIndex else { return nil }
        let length = index - start + 1
        let parameters = String(decoding: bytes[(start + 2)..<index], as: UTF8.self)
            .split(separator: ";").map { Int($0) ?? 0 }
        return (key(final: bytes[index], parameters: parameters) ?? .unknown(text(bytes.prefix(length))), length)
    }

    private static func key(final: UInt8, parameters: [Int]) -> Key? {
        let shifted = parameters.count >= 2 && parameters[1] == 2
        switch final {
        case 0x41: return shifted ? .shiftUp : .up        // A
        case 0x42: return shifted ? .shiftDown : .down    // B
        case 0x43: return .right                          // C
        case 0x44: return .left                           // D
        case 0x48: return .home                           // H
        case 0x46: return .end                            // F
        case 0x7E:                                        // ~ with a key number
            switch parameters.first {
            case 1, 7: return .home
            case 4, 8: return .end
            case 3: return .delete
            case 5: return .pageUp
            case 6: return .pageDown
            default: return nil
            }
        default: return nil
        }
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    /// `\u{XX}` for a byte that is not a character on its own.
    fileprivate init(format byte: UInt8) {
        self = "\\u{\(String(byte, radix: 16, uppercase: true))}"
    }
}
