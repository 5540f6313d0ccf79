import Testing
@testable import TodoCore

@Suite("Terminal columns")
struct TerminalColumnsTests {
    @Test("a character takes the columns a terminal gives it", arguments: [
        ("a", 1), ("é", 1), ("e\u{301}", 1), ("猫", 2), ("한", 2), ("Ａ", 2), ("ｶ", 1), ("、", 2),
        ("☕️", 2), ("❤️", 2), ("☺︎", 1), ("👩‍💻", 2), ("👍🏽", 2), ("🇫🇷", 2), ("1️⃣", 2),
        ("\u{301}", 0), ("\u{200B}", 0), ("\u{200D}", 0), ("\t", 0), ("\u{1B}", 0), ("\r\n", 0),
    ] as [(Character, Int)])
    func characterColumns(character: Character, columns: Int) {
        #expect(character.terminalColumns == columns)
    }

    static let samples = [
        "milk", "牛乳を買う", "👩‍💻 write the 報告書 report", "café au lait", "🇫🇷🇯🇵 trip",
        "한국어 수업 준비하기", "e\u{301}te\u{301} ☕️☕️☕️", "",
    ]

    @Test("a clipped text never takes more columns than asked, and ends in … only when it was cut",
          arguments: samples)
    func clipping(text: String) {
        for width in 0...30 {
            let clipped = text.clipped(toColumns: width)
            #expect(clipped.terminalColumns <= width)
            if text.terminalColumns <= width {
                #expect(clipped == text)
            } else if width > 0 {
                #expect(clipped.hasSuffix("…"))
                #expect(clipped.terminalColumns >= width - 1)
            }
        }
    }

    @Test("a prefix never splits a wide character: it pads the column left over")
    func prefixPads() {
        #expect("牛乳".prefix(columns: 3) == "牛 ")
        #expect("牛乳".prefix(columns: 4) == "牛乳")
        #expect("牛乳".prefix(columns: 9) == "牛乳")
        #expect("a牛".prefix(columns: 2) == "a ")
        #expect("牛".prefix(columns: 1) == " ")
    }

    @Test("wrapped lines fit the width and keep every character", arguments: samples + [
        "/home/someone/.stillwater-todo.json was not a todo list (line 1: not JSON); it was renamed to "
            + "/home/someone/.stillwater-todo.json.corrupt-20250101-120000, and the list starts empty",
        "一二三四五六七八九十一二三四五六七八九十",
    ])
    func wrapping(text: String) {
        for width in 2...40 {
            let lines = text.wrapped(toColumns: width)
            #expect(!lines.isEmpty)
            for line in lines { #expect(line.terminalColumns <= width, "\(line) at \(width)") }
            #expect(lines.joined().filter { $0 != " " } == text.filter { $0 != " " })
        }
        #expect(text.wrapped(toColumns: 200) == [text])
    }
}

@Suite("LineEditor with wide characters")
struct LineEditorWideTests {
    @Test("the visible window and the cursor stay inside the width, with the cursor's character shown",
          arguments: ["牛乳と卵とパンを買う", "👩‍💻👩‍💻 report 報告書 🇫🇷", "ab猫cd犬ef鳥gh魚ij"])
    func staysInBounds(text: String) {
        for width in 8...24 {
            for position in 0...text.count {
                var editor = LineEditor(text: text)
                _ = editor.handle(.home)
                for _ in 0..<position { _ = editor.handle(.right) }
                let (line, column) = editor.visibleLine(prompt: "add: ", width: width)
                #expect(line.terminalColumns < width, "\(line) at \(width)")
                #expect(column < width)
                #expect(column >= 5)
                // The character drawn at the cursor's column is the one under the cursor.
                var at = 0
                var under: Character?
                for character in line where at <= column {
                    if at == column, character.terminalColumns > 0 { under = character }
                    at += character.terminalColumns
                }
                if editor.cursor < editor.characters.count, editor.characters[editor.cursor].terminalColumns <= width - 6 {
                    #expect(under == editor.characters[editor.cursor], "\(line) cursor \(column) at \(width)")
                } else if editor.cursor == editor.characters.count {
                    #expect(at == column, "\(line): the cursor is just after the text")
                }
            }
        }
    }
}
