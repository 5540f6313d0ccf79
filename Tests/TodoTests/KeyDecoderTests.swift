import Testing
@testable import TodoCore

@Suite("KeyDecoder")
struct KeyDecoderTests {
    func keys(_ text: String) -> [Key] {
        var decoder = KeyDecoder()
        return decoder.feed(Array(text.utf8)) + decoder.flush()
    }

    @Test("escape sequences become arrow and editing keys", arguments: [
        ("\u{1B}[A", Key.up), ("\u{1B}[B", .down), ("\u{1B}[C", .right), ("\u{1B}[D", .left),
        ("\u{1B}OA", .up), ("\u{1B}OB", .down), ("\u{1B}[H", .home), ("\u{1B}[F", .end),
        ("\u{1B}[1~", .home), ("\u{1B}[4~", .end), ("\u{1B}[3~", .delete), ("\u{1B}[5~", .pageUp),
        ("\u{1B}[6~", .pageDown), ("\u{1B}[1;2A", .shiftUp), ("\u{1B}[1;2B", .shiftDown),
    ])
    func sequences(bytes: String, key: Key) {
        #expect(keys(bytes) == [key])
    }

    @Test("control bytes become control keys, Enter, Tab and Backspace")
    func controls() {
        #expect(keys("\u{03}\u{04}\u{0C}\u{12}") == [.control("c"), .control("d"), .control("l"), .control("r")])
        #expect(keys("\r\n\t\u{7F}\u{08}") == [.enter, .enter, .tab, .backspace, .backspace])
    }

    @Test("characters of any script arrive whole, even split across reads")
    func utf8() {
        #expect(keys("aé☕️") == [.character("a"), .character("é"), .character("☕"), .character("\u{FE0F}")])
        var decoder = KeyDecoder()
        let bytes = Array("é".utf8)
        #expect(decoder.feed([bytes[0]]) == [])
        #expect(decoder.hasPending)
        #expect(decoder.feed([bytes[1]]) == [.character("é")])
    }

    @Test("a sequence split across reads waits for its end")
    func split() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1B]) == [])
        #expect(decoder.feed(Array("[".utf8)) == [])
        #expect(decoder.feed(Array("Ax".utf8)) == [.up, .character("x")])
    }

    @Test("a lone Escape is a key once the input pauses, and Escape before a key is two keys")
    func escape() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1B]) == [])
        #expect(decoder.flush() == [.escape])
        #expect(keys("\u{1B}q") == [.escape, .character("q")])
    }

    @Test("unknown sequences and invalid bytes are reported as unknown, never dropped silently or crashing")
    func unknown() {
        #expect(keys("\u{1B}[15~") == [.unknown("\u{1B}[15~")])
        #expect(keys("\u{1B}[") == [.unknown("\u{1B}[")])
        var decoder = KeyDecoder()
        #expect(decoder.feed([0xFF, 0x61]) == [.unknown("\\u{FF}"), .character("a")])
    }
}

@Suite("LineEditor")
struct LineEditorTests {
    func edit(_ text: String = "", _ keys: [Key]) -> LineEditor {
        var editor = LineEditor(text: text)
        for key in keys { _ = editor.handle(key) }
        return editor
    }

    @Test("typing inserts at the cursor, which moves with the arrows, Home and End")
    func typing() {
        #expect(edit("mlk", [.left, .left, .character("i")]).text == "milk")
        #expect(edit("ilk", [.home, .character("m"), .end, .character("s")]).text == "milks")
        #expect(edit("ab", [.control("a"), .character("<"), .control("e"), .character(">")]).text == "<ab>")
        #expect(edit("a", [.left, .left, .right, .right, .right]).cursor == 1)
    }

    @Test("Backspace, Delete and the kill keys remove what they say")
    func deleting() {
        #expect(edit("milk", [.backspace]).text == "mil")
        #expect(edit("milk", [.home, .backspace]).text == "milk")
        #expect(edit("milk", [.home, .delete]).text == "ilk")
        #expect(edit("milk", [.delete]).text == "milk")
        #expect(edit("oat milk", [.left, .left, .control("u")]).text == "lk")
        #expect(edit("oat milk", [.left, .left, .control("k")]).text == "oat mi")
        #expect(edit("buy oat milk  ", [.control("w")]).text == "buy oat ")
    }

    @Test("a combining mark typed after a letter joins it, so the cursor counts what is seen")
    func combining() {
        let editor = edit("", [.character("e"), .character("\u{301}"), .character("☕"), .character("\u{FE0F}")])
        #expect(editor.text == "e\u{301}☕️")
        #expect(editor.characters.count == 2)
        #expect(editor.cursor == 2)
    }

    @Test("Enter submits, Escape and Ctrl-C cancel")
    func outcomes() {
        var editor = LineEditor(text: "x")
        #expect(editor.handle(.character("y")) == .editing)
        #expect(editor.handle(.enter) == .submit)
        #expect(editor.handle(.escape) == .cancel)
        #expect(editor.handle(.control("c")) == .cancel)
        #expect(editor.text == "xy")
    }

    @Test("a long line scrolls sideways to keep the cursor visible")
    func scrolling() {
        let editor = LineEditor(text: String(repeating: "a", count: 30) + "END")
        let (text, column) = editor.visibleLine(prompt: "add: ", width: 20)
        #expect(text.count <= 20)
        #expect(text.hasPrefix("add: ") && text.hasSuffix("END"))
        #expect(column == text.count)
        let home = edit(editor.text, [.home]).visibleLine(prompt: "add: ", width: 20)
        #expect(home.cursorColumn == 5)
    }
}

@Suite("Keymap")
struct KeymapTests {
    @Test("every key in the table leads to its command, and no key is bound twice")
    func table() {
        var seen = Set<Key>()
        for binding in Keymap.bindings {
            for key in binding.keys {
                #expect(seen.insert(key).inserted, "\(key) is bound twice")
                #expect(Keymap.command(for: key) == binding.command)
            }
        }
        #expect(Set(Keymap.bindings.map(\.command)) == Set(ScreenCommand.allCases))
    }

    @Test("the help line starts with help and quit, and the reference names every key")
    func help() {
        #expect(Keymap.helpLine(width: 100).hasPrefix("? help  q quit"))
        for binding in Keymap.bindings {
            for key in binding.keys { #expect(Keymap.reference.contains(key.description)) }
        }
    }
}
