/// A block's code split the way a generated test file needs it: imports and declarations go at file
/// scope (declarations made `fileprivate`, so blocks in different files never collide), and the
/// statements run inside the test function.
///
/// The split reads lines: a new top-level item starts on a line with no indentation outside any
/// bracket, string or comment; an indented line, or a line inside brackets, continues the item before it.
public struct SwiftBlockParts: Equatable, Sendable {
    /// The block's `import` lines.
    public var imports: [String] = []
    /// Its top-level declarations (types, functions, extensions), each whole.
    public var declarations: [String] = []
    /// Everything else, in order: what runs.
    public var statements: [String] = []
    /// Names the block's top-level `let` and `var` bind. In a script they are globals that live to the
    /// end; in the test function they are kept alive to its end the same way.
    public var topLevelNames: [String] = []

    /// Parts given directly (for tests of the split).
    public init(imports: [String] = [], declarations: [String] = [], statements: [String] = [],
                topLevelNames: [String] = []) {
        self.imports = imports
        self.declarations = declarations
        self.statements = statements
        self.topLevelNames = topLevelNames
    }

    enum Kind { case importLine, declaration, statement }

    /// Splits `block`'s lines into imports, declarations and statements.
    public init(_ block: [String]) {
        var scanner = NestingScanner()
        var kind = Kind.statement
        var pendingAttributes: [String] = []
        for line in block {
            let startsItem = scanner.isAtTopLevel && !(line.first?.isWhitespace ?? true)
            scanner.scan(line)
            guard startsItem else {
                append([line], as: kind)
                continue
            }
            let item = Self.classify(line)
            if item == nil, scanner.isAtTopLevel {   // a line of attributes only, such as `@Test("…")`
                pendingAttributes.append(line)
                continue
            }
            kind = item ?? .statement
            if kind == .statement, let name = Self.boundName(line) { topLevelNames.append(name) }
            let lines = pendingAttributes + [line]
            pendingAttributes = []
            append(kind == .declaration ? Self.madeFileprivate(lines) : lines, as: kind)
        }
        append(pendingAttributes, as: .declaration)
    }

    mutating func append(_ lines: [String], as kind: Kind) {
        switch kind {
        case .importLine: imports += lines
        case .declaration: declarations += lines
        case .statement: statements += lines
        }
    }

    static let declarationKeywords: Set<Substring> = [
        "struct", "class", "enum", "actor", "protocol", "func", "extension", "typealias",
    ]
    static let modifiers: Set<Substring> = [
        "final", "indirect", "nonisolated", "public", "package", "internal", "fileprivate", "private", "open",
    ]
    static let accessModifiers: Set<Substring> = ["public", "package", "internal", "fileprivate", "private", "open"]

    /// What a top-level line starts, or nil for a line of attributes only.
    static func classify(_ line: String) -> Kind? {
        let words = wordsAfterAttributes(line)
        guard let first = words.first else { return line.hasPrefix("@") ? nil : .statement }
        if first == "import" { return .importLine }
        guard let keyword = words.first(where: { !modifiers.contains($0) }) else { return .statement }
        return declarationKeywords.contains(keyword) ? .declaration : .statement
    }

    /// The words of a line after its leading `@Attribute` and `@Attribute(…)` groups.
    static func wordsAfterAttributes(_ line: String) -> [Substring] {
        var rest = Substring(line)
        while rest.first == "@" {
            rest = rest.dropFirst().drop(while: { $0.isLetter || $0.isNumber || $0 == "_" })
            if rest.first == "(" {
                // Skip to the parenthesis that closes the attribute's arguments, past any strings.
                var depth = 0, inString = false, index = rest.startIndex
                repeat {
                    switch rest[index] {
                    case "\"": inString.toggle()
                    case "(" where !inString: depth += 1
                    case ")" where !inString: depth -= 1
                    default: break
                    }
                    index = rest.index(after: index)
                } while depth > 0 && index < rest.endIndex
                rest = rest[index...]
            }
            rest = rest.drop(while: \.isWhitespace)
        }
        return rest.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).prefix(4).map { $0 }
    }

    /// Inserts `fileprivate` before a declaration's keyword and modifiers, unless it names its own
    /// access, or is an extension that declares a conformance (which cannot take an access modifier).
    static func madeFileprivate(_ lines: [String]) -> [String] {
        guard let index = lines.firstIndex(where: { classify($0) == .declaration }) else { return lines }
        let line = lines[index]
        let words = wordsAfterAttributes(line)
        if words.contains(where: accessModifiers.contains) { return lines }
        guard let first = words.first else { return lines }
        if words.first(where: { !modifiers.contains($0) }) == "extension" {
            let header = line.prefix(while: { $0 != "{" })
            if header.contains(":") { return lines }
        }
        var result = lines
        result[index].insert(contentsOf: "fileprivate ", at: first.startIndex)   // words share line's indices
        return result
    }

    /// `x` for a line `let x = …` or `var x: T = …`; nil for patterns such as `let (a, b) = …` or `_`.
    static func boundName(_ line: String) -> String? {
        guard line.hasPrefix("let ") || line.hasPrefix("var ") else { return nil }
        let name = line.dropFirst(4).prefix(while: { $0.isLetter || $0.isNumber || $0 == "_" })
        return name.isEmpty || name == "_" ? nil : String(name)
    }
}

/// Follows brackets, string literals (with interpolations) and comments across lines, so the split
/// knows whether a line starts inside something that an earlier line opened.
struct NestingScanner {
    private enum Context { case code(brackets: Int), string(multiline: Bool), blockComment }
    private var stack: [Context] = [.code(brackets: 0)]

    var isAtTopLevel: Bool {
        if stack.count == 1, case .code(0) = stack[0] { return true }
        return false
    }

    mutating func scan(_ line: String) {
        let characters = Array(line)
        var index = 0
        func next(_ text: String) -> Bool {
            let end = index + text.count
            return end <= characters.count && String(characters[index..<end]) == text
        }
        while index < characters.count {
            switch stack[stack.count - 1] {
            case .blockComment:
                if next("*/") { stack.removeLast(); index += 1 }
            case .string(let multiline):
                if characters[index] == "\\" {
                    if next("\\(") { stack.append(.code(brackets: 0)); index += 1 } else { index += 1 }
                } else if multiline ? next("\"\"\"") : characters[index] == "\"" {
                    stack.removeLast()
                    index += multiline ? 2 : 0
                }
            case .code(let brackets):
                if next("//") { return }
                if next("/*") {
                    stack.append(.blockComment)
                    index += 1
                } else if next("\"\"\"") {
                    stack.append(.string(multiline: true))
                    index += 2
                } else if characters[index] == "\"" {
                    stack.append(.string(multiline: false))
                } else if "([{".contains(characters[index]) {
                    stack[stack.count - 1] = .code(brackets: brackets + 1)
                } else if ")]}".contains(characters[index]) {
                    if brackets == 0, stack.count > 1 {
                        stack.removeLast()   // the parenthesis that closes an interpolation
                    } else {
                        stack[stack.count - 1] = .code(brackets: max(0, brackets - 1))
                    }
                }
            }
            index += 1
        }
    }
}
