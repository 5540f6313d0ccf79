/// How wide text is on a terminal, in columns, and how to cut, pad and wrap it by columns.
///
/// A terminal gives each grapheme cluster (a Swift `Character`) 0, 1 or 2 columns: an East Asian wide
/// or fullwidth character (`猫`, `ｶ`) and an emoji shown as a picture (`☕️`, `👩‍💻`, `🇫🇷`) take two;
/// combining marks, zero-width spaces and joiners on their own, and control characters take none;
/// everything else takes one. Counting `Character`s instead is what makes a CJK title overflow its row.
extension Character {
    /// The number of terminal columns the character takes: 0, 1 or 2.
    ///
    /// ```swift
    /// print(Character("a").terminalColumns, Character("猫").terminalColumns, Character("👩‍💻").terminalColumns)
    /// // Prints "1 2 2"
    /// ```
    ///
    /// - Note: The wide ranges are East Asian Width W and F of Unicode 15, gathered into blocks; a
    ///   terminal with older tables, or one set to treat ambiguous characters as wide, may differ by a
    ///   column for rare characters.
    public var terminalColumns: Int {
        let scalars = unicodeScalars
        let first = scalars.first!
        if first.properties.generalCategory == .control || first.properties.generalCategory == .lineSeparator
            || first.properties.generalCategory == .paragraphSeparator {
            return 0
        }
        // An emoji shown as a picture: one with emoji presentation, one asking for it with U+FE0F, or a
        // sequence joined by U+200D (a family, a skin tone): two columns however many scalars it holds.
        if scalars.contains(where: \.properties.isEmojiPresentation)
            || (first.properties.isEmoji && scalars.contains("\u{FE0F}")) {
            return 2
        }
        if scalars.allSatisfy(Self.isZeroWidth) { return 0 }
        return Self.isWide(first) ? 2 : 1
    }

    /// Whether `scalar` takes no column of its own: a combining mark, a format character (a zero-width
    /// space or joiner), or a default-ignorable one (a variation selector).
    private static func isZeroWidth(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: true
        default: scalar.properties.isDefaultIgnorableCodePoint
        }
    }

    /// Whether `scalar` is East Asian Wide or Fullwidth.
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return wideRanges.contains { $0.contains(value) }
    }

    /// The blocks whose characters are East Asian Wide (W) or Fullwidth (F).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,    // Hangul Jamo leading consonants
        0x2E80...0x303E,    // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,    // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, enclosed CJK
        0x3400...0x4DBF,    // CJK unified ideographs extension A
        0x4E00...0x9FFF,    // CJK unified ideographs
        0xA000...0xA4CF,    // Yi
        0xA960...0xA97F,    // Hangul Jamo extended A
        0xAC00...0xD7A3,    // Hangul syllables
        0xF900...0xFAFF,    // CJK compatibility ideographs
        0xFE10...0xFE19,    // vertical forms
        0xFE30...0xFE6F,    // CJK compatibility forms, small form variants
        0xFF00...0xFF60,    // fullwidth ASCII
        0xFFE0...0xFFE6,    // fullwidth signs
        0x16FE0...0x16FE4,  // ideographic symbols
        0x17000...0x18CFF,  // Tangut, Khitan
        0x1B000...0x1B2FF,  // Kana supplement and extensions, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x3FFFD,  // CJK unified ideographs extensions B to H, compatibility supplement
    ]
}

extension StringProtocol {
    /// The number of terminal columns the text takes: the sum of its characters' columns.
    ///
    /// ```swift
    /// print("milk".terminalColumns, "牛乳".terminalColumns, "café".terminalColumns)
    /// // Prints "4 4 4"
    /// ```
    ///
    /// - Complexity: O(n) for n characters.
    public var terminalColumns: Int {
        reduce(0) { $0 + $1.terminalColumns }
    }

    /// The longest start of the text that fits in `columns` columns, padded with spaces to exactly
    /// `columns` when a wide character would have been split (it is left out whole).
    ///
    /// ```swift
    /// print("[\("牛乳".prefix(columns: 3))]")
    /// // Prints "[牛 ]"
    /// ```
    public func prefix(columns: Int) -> String {
        var used = 0
        var end = startIndex
        while end < endIndex, used + self[end].terminalColumns <= columns {
            used += self[end].terminalColumns
            end = index(after: end)
        }
        // Only a wide character stops short of the limit: pad its missing column.
        let padding = end < endIndex ? String(repeating: " ", count: Swift.max(columns - used, 0)) : ""
        return String(self[..<end]) + padding
    }

    /// The text cut to `columns` columns, ending in `…` when it was cut.
    ///
    /// ```swift
    /// print("buy oat milk".clipped(toColumns: 8), "牛乳を買う".clipped(toColumns: 6))
    /// // Prints "buy oat… 牛乳 …"
    /// ```
    public func clipped(toColumns columns: Int) -> String {
        guard terminalColumns > columns else { return String(self) }
        guard columns > 0 else { return "" }
        return prefix(columns: columns - 1) + "…"
    }

    /// The text as lines of at most `columns` columns: unchanged when it fits; otherwise broken between
    /// words where it can, inside a word (a long path, say) where it must. Never an empty array.
    ///
    /// ```swift
    /// print("the file /tmp/a/b.json was set aside".wrapped(toColumns: 12))
    /// // Prints "[\"the file\", \"/tmp/a/b.jso\", \"n was set\", \"aside\"]"
    /// ```
    public func wrapped(toColumns columns: Int) -> [String] {
        let columns = Swift.max(columns, 2)
        guard terminalColumns > columns else { return [String(self)] }
        var lines: [String] = []
        var line = ""
        for word in split(separator: " ", omittingEmptySubsequences: true) {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if candidate.terminalColumns <= columns {
                line = candidate
                continue
            }
            if !line.isEmpty { lines.append(line) }
            line = String(word)
            while line.terminalColumns > columns {
                // A word holds no spaces, so a space at the end of its prefix is padding: leave it out.
                let cut = String(line.prefix(columns: columns).prefix { $0 != " " })
                lines.append(cut)
                line = String(line.dropFirst(cut.count))
            }
        }
        lines.append(line)
        return lines
    }
}
