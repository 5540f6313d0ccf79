/// The difference of two values, as the lines of their `dump`s that differ.
enum StateDiff {
    /// Both dumps, line by line: common lines indented, lines only in `expected` marked `−`, lines only
    /// in `actual` marked `+`.
    static func lines<Value>(expected: Value, actual: Value) -> String {
        let old = dumpLines(expected)
        let new = dumpLines(actual)
        // The longest common subsequence of lines, by dynamic programming (states are small).
        var table = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                table[i][j] = old[i] == new[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var result: [String] = []
        var (i, j) = (0, 0)
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                result.append("  \(old[i])")
                i += 1
                j += 1
            } else if j < new.count, i == old.count || table[i][j + 1] >= table[i + 1][j] {
                result.append("+ \(new[j])")
                j += 1
            } else {
                result.append("− \(old[i])")
                i += 1
            }
        }
        return result.joined(separator: "\n")
    }

    static func dumpLines<Value>(_ value: Value) -> [String] {
        var text = ""
        dump(value, to: &text)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }
}
