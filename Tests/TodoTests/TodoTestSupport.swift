import Foundation
import Testing
@testable import TodoCore

/// A fresh folder under the system's temporary folder, removed when the value is released.
final class TemporaryFolder {
    let path: String

    init() {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("todo-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` in the folder.
    func file(_ name: String) -> String {
        (path as NSString).appendingPathComponent(name)
    }

    /// The names in the folder, sorted.
    var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    func write(_ text: String, to name: String) {
        #expect(FileManager.default.createFile(atPath: file(name), contents: Data(text.utf8)))
    }

    func read(_ name: String) -> String? {
        FileManager.default.contents(atPath: file(name)).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// A stand-in terminal for ``TodoScreen``: the text of every row, and how many row writes it received.
final class VirtualTerminal {
    private(set) var rows: [String]
    private(set) var styles: [ScreenLine.Style]
    private(set) var lineWrites = 0
    private(set) var clears = 0

    init(height: Int) {
        rows = Array(repeating: "", count: height)
        styles = Array(repeating: .plain, count: height)
    }

    func receive(_ write: ScreenWrite) {
        switch write {
        case .clear:
            clears += 1
            rows = Array(repeating: "", count: rows.count)
        case .line(let row, let line):
            lineWrites += 1
            while rows.count <= row { rows.append(""); styles.append(.plain) }
            rows[row] = line.text
            styles[row] = line.style
        }
    }

    /// The status as one text (see ``statusText(of:)``).
    var status: String { statusText(of: rows) }

    /// The rows, with trailing blank ones dropped: what a person would read.
    var screen: String {
        var rows = self.rows
        while rows.last == "" { rows.removeLast() }
        return rows.joined(separator: "\n")
    }
}

/// The status shown on a screen of `rows`, as one text: the rows above the help line, up to the blank
/// row above them, joined by spaces (the status is wrapped at spaces).
func statusText(of rows: [String]) -> String {
    var lines: [String] = []
    var row = rows.count - 2
    while row > 0, !rows[row].isEmpty {
        lines.insert(rows[row], at: 0)
        row -= 1
    }
    return lines.joined(separator: " ")
}

/// A screen over a session holding `titles`, on a virtual terminal of `width` × `height`.
func makeScreen(
    _ titles: [String], width: Int = 100, height: Int = 12
) -> (TodoSession, TodoScreen, VirtualTerminal) {
    let session = TodoSession(TodoList(titles: titles), showsCursor: true)
    let terminal = VirtualTerminal(height: height)
    let screen = TodoScreen(session: session, width: width, height: height, output: terminal.receive)
    return (session, screen, terminal)
}

extension TodoSession {
    /// The titles of the rows shown, with `x` in front of done ones: `["milk", "x eggs"]`.
    var shownTitles: [String] {
        rows.value.map { ($0.item.isDone ? "x " : "") + $0.item.title }
    }
}

extension TodoScreen {
    /// Handles each key of `keys` in turn.
    func type(_ keys: [Key]) {
        for key in keys { handle(key) }
    }

    /// Handles the characters of `text` as typed keys.
    func type(_ text: String) {
        type(text.map { Key.character($0) })
    }
}
