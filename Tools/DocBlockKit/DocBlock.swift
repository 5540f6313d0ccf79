/// One ```swift block of a markdown file (or of a Swift file's doc comments), with the marker that says
/// how the suite treats it.
public struct DocBlock: Equatable, Sendable {
    /// How the test suite treats a block, from the `<!-- doc-test: … -->` line before its fence.
    public enum Mode: Equatable, Sendable {
        /// No marker: the block is compiled, run, and its `// Prints` comments checked.
        case run
        /// `skip REASON` (or `manifest`, a `Package.swift` that `.ci/quickstart` builds): the block is
        /// shown as a skipped test with its reason.
        case skip(String)
        /// `continues`: the block runs after the block before it in the same file, in the same scope.
        case continues
        /// `waits REASON`: the block prints from another task or thread after its last line (the reason
        /// says which); the test waits up to 10 seconds for the lines its `// Prints` comments promise.
        case waits(String)
        /// `expect-mismatch`: the block runs, and the test passes only if its output differs from its
        /// `// Prints` comments (for the suite's own fixtures, which prove the check can fail).
        case expectMismatch
    }

    /// The file as the test names it, such as `README.md` or `Sources/Stillwater/Operators/Map.swift`.
    public var file: String
    /// The 1-based line of the opening fence.
    public var fenceLine: Int
    /// The lines between the fences.
    public var lines: [String]
    /// How the test treats the block: run it, skip it, run it after the block before it…
    public var mode: Mode
    /// Why the block's marker could not be read, if it could not.
    public var problem: String?

    /// The test's name, such as `README.md:52`.
    public var name: String { "\(file):\(fenceLine)" }

    /// A block of `file` whose opening fence is on line `fenceLine`.
    public init(file: String, fenceLine: Int, lines: [String], mode: Mode, problem: String? = nil) {
        self.file = file
        self.fenceLine = fenceLine
        self.lines = lines
        self.mode = mode
        self.problem = problem
    }
}

/// Finds the Swift blocks of markdown files and of `///` doc comments, with their markers.
public enum DocBlocks {
    /// Whether a markdown line opens a Swift code block. The build plugin counts blocks with this same
    /// rule (it cannot link this library), and the extractor stops if the counts ever disagree.
    public static func isOpeningFence(_ line: Substring) -> Bool {
        line.drop(while: { $0 == " " }).hasPrefix("```swift")
    }

    /// The Swift blocks of a markdown file, in order.
    public static func extract(markdown: String, file: String) -> [DocBlock] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        var blocks: [DocBlock] = []
        var index = 0
        while index < lines.count {
            guard isOpeningFence(lines[index]) else {
                index += 1
                continue
            }
            let fence = index
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index].trimmingSpaces() != "```" {
                body.append(String(lines[index]))
                index += 1
            }
            let marker = lines[..<fence].last(where: { !$0.trimmingSpaces().isEmpty })
            let (mode, problem) = readMarker(marker.map { $0.trimmingSpaces() } ?? "")
            blocks.append(DocBlock(file: file, fenceLine: fence + 1, lines: body, mode: mode, problem: problem))
            index += 1
        }
        return blocks
    }

    /// The `///` doc comments of a Swift source file as markdown, with every other line left blank so
    /// that line numbers stay those of the source file.
    public static func docCommentMarkdown(swiftSource: String) -> String {
        swiftSource.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let trimmed = line.drop(while: \.isWhitespace)
            guard trimmed.hasPrefix("///") else { return "" }
            let text = trimmed.dropFirst(3)
            return String(text.first == " " ? text.dropFirst() : text)
        }.joined(separator: "\n")
    }

    /// Reads `<!-- doc-test: KIND [reason] -->`; any other line means no marker.
    static func readMarker(_ line: String) -> (DocBlock.Mode, String?) {
        let prefix = "<!-- doc-test:", suffix = "-->"
        guard line.hasPrefix(prefix), line.hasSuffix(suffix) else { return (.run, nil) }
        let content = line.dropFirst(prefix.count).dropLast(suffix.count).trimmingSpaces()
        let kind = content.prefix(while: { $0 != " " })
        let reason = content.dropFirst(kind.count).trimmingSpaces()
        switch kind {
        case "skip" where !reason.isEmpty: return (.skip(reason), nil)
        case "skip": return (.run, "a `skip` marker needs a reason: <!-- doc-test: skip why -->")
        case "manifest": return (.skip("a Package.swift, built as a package of its own by .ci/quickstart"), nil)
        case "continues": return (.continues, nil)
        case "expect-mismatch": return (.expectMismatch, nil)
        case "waits" where !reason.isEmpty: return (.waits(reason), nil)
        case "waits": return (.run, "a `waits` marker needs a reason: <!-- doc-test: waits for what -->")
        default:
            return (.run, "unknown doc-test marker `\(kind)` (skip, manifest, continues, waits, expect-mismatch)")
        }
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
