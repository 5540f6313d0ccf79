/// Reads the `// Prints "a", "b"` comments of a block: the lines the block says it prints, in order.
///
/// A comment line whose text starts with `Prints` holds comma-separated string literals (with `\"`,
/// `\\`, `\n` and `\t` escapes); when it ends with a comma, the literals go on in the next `//` line.
/// Text that is not a literal is an error, so a comment the check cannot read is never ignored.
public enum PrintsComment {
    /// A Prints comment that is not only string literals: where, and why.
    public struct Unreadable: Error, Equatable, CustomStringConvertible {
        /// The 0-based line in the block.
        public var line: Int
        /// What is wrong with it.
        public var reason: String
        /// One line naming the line and the reason.
        public var description: String { "cannot read the Prints comment on line \(line + 1) of the block: \(reason)" }
    }

    /// Every line the block's Prints comments promise, in order.
    ///
    /// - Throws: ``Unreadable`` for a Prints comment holding anything but string literals.
    public static func expectedLines(in block: [String]) throws(Unreadable) -> [String] {
        var expected: [String] = []
        var index = 0
        while index < block.count {
            guard var rest = commentText(block[index]), rest.hasPrefix("Prints") else {
                index += 1
                continue
            }
            rest = rest.dropFirst("Prints".count)
            while true {
                let (literals, continues) = try literalList(rest, line: index)
                expected += literals
                index += 1
                guard continues else { break }
                guard index < block.count, let next = commentText(block[index]) else {
                    throw Unreadable(line: index - 1, reason: "it ends with a comma but no `//` line follows")
                }
                rest = next
            }
        }
        return expected
    }

    /// The text after `//` of a line that is only a comment (not `///`), without leading spaces.
    static func commentText(_ line: String) -> Substring? {
        let trimmed = line.drop(while: \.isWhitespace)
        guard trimmed.hasPrefix("//"), !trimmed.hasPrefix("///") else { return nil }
        return trimmed.dropFirst(2).drop(while: \.isWhitespace)
    }

    /// `"a", "b"` or `"a",` (which continues on the next line).
    static func literalList(_ text: Substring, line: Int) throws(Unreadable) -> ([String], continues: Bool) {
        var literals: [String] = []
        var rest = text.drop(while: \.isWhitespace)
        while true {
            guard rest.first == "\"" else {
                let found = rest.isEmpty ? "nothing" : "`\(rest)`"
                throw Unreadable(line: line, reason: "expected a string literal, found \(found)")
            }
            let (literal, after) = try stringLiteral(rest.dropFirst(), line: line)
            literals.append(literal)
            rest = after.drop(while: \.isWhitespace)
            if rest.isEmpty { return (literals, false) }
            guard rest.first == "," else {
                throw Unreadable(line: line, reason: "expected a comma after \"\(literal)\", found `\(rest)`")
            }
            rest = rest.dropFirst().drop(while: \.isWhitespace)
            if rest.isEmpty { return (literals, true) }
        }
    }

    /// The literal's value and the text after its closing quote; `text` starts after the opening quote.
    static func stringLiteral(_ text: Substring, line: Int) throws(Unreadable) -> (String, Substring) {
        var value = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            switch character {
            case "\"":
                return (value, text[index...])
            case "\\":
                guard index < text.endIndex else { break }
                let escaped = text[index]
                index = text.index(after: index)
                switch escaped {
                case "n": value.append("\n")
                case "t": value.append("\t")
                case "\"", "\\": value.append(escaped)
                default: throw Unreadable(line: line, reason: "unknown escape `\\\(escaped)`")
                }
            default:
                value.append(character)
            }
        }
        throw Unreadable(line: line, reason: "a string literal is not closed")
    }
}

/// What differs between the lines a block printed and the lines its `// Prints` comments promise, or nil.
public func printedMismatch(expected: [String], printed: [String]) -> String? {
    guard expected != printed else { return nil }
    let shown = { (lines: [String]) in lines.isEmpty ? "(nothing)" : lines.map { String(reflecting: $0) }.joined(separator: ", ") }
    let first = (0..<min(expected.count, printed.count)).first(where: { expected[$0] != printed[$0] })
        ?? min(expected.count, printed.count)
    return """
        the block printed what its Prints comment does not say (first difference at printed line \(first + 1))
          Prints:  \(shown(expected))
          printed: \(shown(printed))
        """
}
