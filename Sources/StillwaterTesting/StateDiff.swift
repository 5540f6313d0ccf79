/// The difference of two values, as the lines of their `dump`s that differ.
///
/// The dumps list the entries of dictionaries and the members of sets in the order of their text (see
/// ``dumpLines(_:)``), so two equal dictionaries show the same lines.
///
/// The lines both dumps start with and end with are set aside first; the lines left between are aligned
/// by a longest common subsequence, whose table has one cell per pair of those lines. When that table
/// would pass ``cellLimit`` (two big states that differ almost everywhere), the lines between are not
/// aligned: all the expected ones are listed as removed, then all the actual ones as added, each side
/// cut after ``fallbackLineLimit`` lines, under a line saying so. Memory stays bounded either way: the
/// dumps, plus at most ``cellLimit`` 4-byte cells.
///
/// Unchanged lines are shown only near a change (``context`` lines on each side); a longer run of them
/// is one line, `  … 19993 unchanged lines`.
enum StateDiff {
    /// The most cells the alignment table may have: 4 million, 16 MB.
    static let cellLimit = 4_000_000
    /// How many unchanged lines are shown before and after each changed one.
    static let context = 3
    /// How many lines of each side the unaligned listing shows.
    static let fallbackLineLimit = 100

    /// One line of the diff.
    enum Line: Equatable {
        case same(String)
        case removed(String)
        case added(String)
        /// Said where the lines between could not be aligned.
        case note(String)
    }

    /// The two values' dumps, line by line: unchanged lines indented (only those near a change), lines
    /// only in `expected` marked `−`, lines only in `actual` marked `+`.
    ///
    /// - Complexity: O(*n* + *m*) for dumps of *n* and *m* lines, plus O(*n'* · *m'*) for the *n'* and
    ///   *m'* lines left once the common first and last lines are set aside, when *n'* · *m'* is at most
    ///   `cellLimit`.
    static func lines<Value>(expected: Value, actual: Value, cellLimit: Int = cellLimit) -> String {
        render(diff(dumpLines(expected), dumpLines(actual), cellLimit: cellLimit))
    }

    /// The lines of the diff of `old` into `new`, unchanged ones included.
    static func diff(_ old: [String], _ new: [String], cellLimit: Int = cellLimit) -> [Line] {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
              old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        let oldMiddle = old[prefix..<(old.count - suffix)]
        let newMiddle = new[prefix..<(new.count - suffix)]
        var result = old[..<prefix].map(Line.same)
        if oldMiddle.count <= cellLimit / max(newMiddle.count, 1) {
            result += aligned(Array(oldMiddle), Array(newMiddle))
        } else {
            result.append(.note("The states differ in \(oldMiddle.count) expected and \(newMiddle.count) actual lines, "
                                + "too many to align: all expected ones are listed, then all actual ones."))
            result += listed(oldMiddle, as: Line.removed, what: "expected")
            result += listed(newMiddle, as: Line.added, what: "actual")
        }
        result += old[(old.count - suffix)...].map(Line.same)
        return result
    }

    /// `old` and `new` aligned by their longest common subsequence of lines.
    private static func aligned(_ old: [String], _ new: [String]) -> [Line] {
        let width = new.count + 1
        // table[i * width + j]: the length of the longest common subsequence of old[i...] and new[j...].
        var table = [Int32](repeating: 0, count: (old.count + 1) * width)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                table[i * width + j] = old[i] == new[j]
                    ? table[(i + 1) * width + j + 1] + 1
                    : max(table[(i + 1) * width + j], table[i * width + j + 1])
            }
        }
        var result: [Line] = []
        var (i, j) = (0, 0)
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                result.append(.same(old[i]))
                i += 1
                j += 1
            } else if i < old.count, j == new.count || table[(i + 1) * width + j] >= table[i * width + j + 1] {
                result.append(.removed(old[i]))     // a removed line before the added one that replaces it
                i += 1
            } else {
                result.append(.added(new[j]))
                j += 1
            }
        }
        return result
    }

    /// The first ``fallbackLineLimit`` of `lines` marked by `mark`, and a note of how many more there are.
    private static func listed(_ lines: ArraySlice<String>, as mark: (String) -> Line, what: String) -> [Line] {
        var result = lines.prefix(fallbackLineLimit).map(mark)
        if lines.count > fallbackLineLimit {
            result.append(.note("… \(lines.count - fallbackLineLimit) more \(what) lines"))
        }
        return result
    }

    /// The text of `lines`: each changed line with ``context`` unchanged lines around it; a longer run of
    /// unchanged lines (two or more) is one line saying how many. When no line changed (two values whose
    /// `==` tells them apart although their dumps are the same), a line says so.
    static func render(_ lines: [Line]) -> String {
        let changed = lines.indices.filter { if case .same = lines[$0] { false } else { true } }
        guard !changed.isEmpty else {
            return "  (the dumps of the two states are the same: their == tells apart what dump does not show)"
        }
        var shown = [Bool](repeating: false, count: lines.count)
        for index in changed {
            for near in max(0, index - context)...min(lines.count - 1, index + context) { shown[near] = true }
        }
        var result: [String] = []
        var start = 0
        while start < lines.count {
            var end = start + 1
            while end < lines.count, shown[end] == shown[start] { end += 1 }
            if shown[start] || end - start == 1 {
                result += lines[start..<end].map(text)
            } else {
                result.append("  … \(end - start) unchanged lines")
            }
            start = end
        }
        return result.joined(separator: "\n")
    }

    private static func text(_ line: Line) -> String {
        switch line {
        case .same(let text), .note(let text): "  \(text)"
        case .removed(let text): "− \(text)"
        case .added(let text): "+ \(text)"
        }
    }

    /// The lines of `dump(value)`, except that the entries of each dictionary and the members of each set
    /// come in the order of their text: two equal dictionaries list their entries in orders of their own
    /// (their storage decides it), which would show as changed lines.
    ///
    /// A part with no dictionary or set in it is dumped as `dump` does it; a part with one is dumped a
    /// level at a time, its class's superclass fields left out. As in `dump`, an object met a second time
    /// (a cycle, or one shared by two fields) shows its first line only.
    static func dumpLines<Value>(_ value: Value) -> [String] {
        var expanded: Set<ObjectIdentifier> = []
        return dumpLines(value, name: nil, indent: 0, expanded: &expanded)
    }

    private static func dumpLines(
        _ value: Any, name: String?, indent: Int, expanded: inout Set<ObjectIdentifier>
    ) -> [String] {
        let mirror = Mirror(reflecting: value)
        var seen: Set<ObjectIdentifier> = []
        guard !mirror.children.isEmpty, needsOwnWalk(value, expanded: expanded, seen: &seen) else {
            var text = ""
            dump(value, to: &text, name: name, indent: indent)
            return lines(of: text)
        }
        var heading = ""
        dump(value, to: &heading, name: name, indent: indent, maxDepth: 0)     // its line alone, marked ▹
        let first = lines(of: heading).map { $0.replacing("▹", with: "▿", maxReplacements: 1) }
        if mirror.displayStyle == .class, !expanded.insert(ObjectIdentifier(value as AnyObject)).inserted {
            return first
        }
        var children = mirror.children.map { child in
            dumpLines(child.value, name: child.label, indent: indent + 2, expanded: &expanded)
        }
        if mirror.displayStyle == .dictionary || mirror.displayStyle == .set {
            children.sort { $0.lexicographicallyPrecedes($1) }
        }
        return first + children.joined()
    }

    /// Whether `value` is, or holds somewhere, a dictionary, a set, or an object already `expanded`:
    /// what `dump` alone would not show as `dumpLines` must.
    private static func needsOwnWalk(
        _ value: Any, expanded: Set<ObjectIdentifier>, seen: inout Set<ObjectIdentifier>
    ) -> Bool {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .dictionary?, .set?:
            return true
        case .class?:
            let object = ObjectIdentifier(value as AnyObject)
            if expanded.contains(object) { return true }
            guard seen.insert(object).inserted else { return false }
        default:
            break
        }
        for child in mirror.children where needsOwnWalk(child.value, expanded: expanded, seen: &seen) { return true }
        return false
    }

    private static func lines(of text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }
}
