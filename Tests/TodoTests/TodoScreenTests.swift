import Testing
@testable import TodoCore

@Suite("TodoScreen")
struct TodoScreenTests {
    @Test("the screen shows a header, the rows, the status line and the help line")
    func layout() {
        let (_, _, terminal) = makeScreen(["milk", "eggs"], width: 100, height: 8)
        #expect(terminal.rows == [
            "Stillwater todo · 2 of 2 left",
            ">  1. [ ] milk",
            "   2. [ ] eggs",
            "", "", "",
            "redrew 2 of 2 rows · press ? for every key",
            Keymap.helpLine,
        ])
        #expect(terminal.styles[0] == .header)
        #expect(terminal.styles[1] == .selected)
        #expect(terminal.styles[2] == .plain)
    }

    @Test("toggling one row of 18 rewrites that row and the lines that describe it, nothing else")
    func onlyChangedLinesAreWritten() {
        let (_, screen, terminal) = makeScreen((1...18).map { "item \($0)" }, width: 60, height: 24)
        let before = terminal.lineWrites
        screen.handle(.character(" "))
        #expect(terminal.rows[1] == ">  1. [x] item 1")
        #expect(screen.lastRedraw.description == "redrew 1 of 18 rows")
        // The row, the header (1 fewer left) and the status line.
        #expect(terminal.lineWrites - before == 3)
        let afterToggle = terminal.lineWrites
        screen.handle(.down)
        // Two rows (the cursor left one and reached the other) and the status line.
        #expect(terminal.lineWrites - afterToggle == 3)
        #expect(terminal.rows[2] == ">  2. [ ] item 2")
    }

    @Test("every key listed in the help does what the help says", arguments: Keymap.bindings.flatMap { binding in
        binding.keys.map { (binding.command, $0) }
    })
    func everyKey(command: ScreenCommand, key: Key) {
        let (session, screen, terminal) = makeScreen(["a", "b", "c"], width: 100, height: 30)
        screen.type([.down])                  // the cursor on "b"
        let keepsRunning = screen.handle(key)
        #expect(keepsRunning == (command != .quit))
        let titles = session.shownTitles
        let selected = session.rows.value.firstIndex { $0.isSelected }
        switch command {
        case .cursorUp: #expect(selected == 0)
        case .cursorDown: #expect(selected == 2)
        case .cursorFirst: #expect(selected == 0)
        case .cursorLast: #expect(selected == 2)
        case .toggle: #expect(titles == ["a", "x b", "c"])
        case .add:
            #expect(screen.mode == .adding(LineEditor()))
            #expect(terminal.rows[29] == "add: ")
        case .edit:
            #expect(screen.mode == .editing(id: 2, LineEditor(text: "b")))
            #expect(terminal.rows[29] == "edit: b")
        case .delete: #expect(titles == ["a", "c"])
        case .moveUp: #expect(titles == ["b", "a", "c"])
        case .moveDown: #expect(titles == ["a", "c", "b"])
        case .filter: #expect(session.filter.value == .active)
        case .undo: #expect(terminal.rows[28].hasSuffix("nothing to undo"))
        case .redo: #expect(terminal.rows[28].hasSuffix("nothing to redo"))
        case .help:
            #expect(screen.mode == .help(page: 0))
            #expect(terminal.rows[1] == "Keys:")
        case .redraw: #expect(terminal.clears == 1)
        case .saveAs:
            #expect(screen.mode == .savingAs(LineEditor()))
            #expect(terminal.rows[29] == "save to: ")
        case .quit: #expect(titles == ["a", "b", "c"])
        }
    }

    @Test("undo and redo from the keyboard step through the changes")
    func undoRedo() {
        let (session, screen, _) = makeScreen(["a", "b"])
        screen.type([.character("x"), .character("J"), .character("d")])
        #expect(session.shownTitles == ["b"])
        screen.type([.character("u"), .character("u"), .character("u")])
        #expect(session.shownTitles == ["a", "b"])
        screen.type([.character("r"), .control("r")])
        #expect(session.shownTitles == ["b", "x a"])
    }

    @Test("a typed item is added at the end with the cursor on it; Escape cancels")
    func adding() {
        let (session, screen, terminal) = makeScreen(["milk"])
        screen.handle(.character("a"))
        screen.type("oat milk")
        #expect(terminal.rows[11] == "add: oat milk")
        #expect(screen.cursorPosition?.row == 11)
        #expect(screen.cursorPosition?.column == 13)
        screen.handle(.enter)
        #expect(session.shownTitles == ["milk", "oat milk"])
        #expect(session.rows.value[1].isSelected)
        #expect(terminal.rows[10].hasSuffix("added \"oat milk\""))
        #expect(screen.cursorPosition == nil)

        screen.type([.character("a"), .character("x"), .escape])
        #expect(session.shownTitles == ["milk", "oat milk"])
        #expect(screen.mode == .browsing)

        screen.type([.character("a"), .character(" "), .enter])
        #expect(session.shownTitles == ["milk", "oat milk"])
        #expect(terminal.rows[10].hasSuffix("nothing added: the title was empty"))
    }

    @Test("keys typed into the editor are text, not commands")
    func editorTakesKeys() {
        let (session, screen, _) = makeScreen(["milk"])
        screen.handle(.character("a"))
        screen.type("dq?u")
        #expect(screen.handle(.character("q")))
        screen.handle(.enter)
        #expect(session.shownTitles == ["milk", "dq?uq"])
    }

    @Test("e edits the selected title in place")
    func editing() {
        let (session, screen, _) = makeScreen(["milk", "eggs"])
        screen.type([.character("e"), .home])
        screen.type("oat ")
        screen.handle(.enter)
        #expect(session.shownTitles == ["oat milk", "eggs"])
        screen.type([.character("e"), .control("u"), .enter])
        #expect(session.shownTitles == ["oat milk", "eggs"])
    }

    @Test("keys that need a row say so on an empty list, and change nothing")
    func emptyList() {
        let (session, screen, terminal) = makeScreen([])
        #expect(terminal.rows[1] == "   nothing to do: press a to add an item")
        for key: Key in [.character(" "), .character("d"), .character("J"), .character("e"), .down] {
            #expect(screen.handle(key))
        }
        #expect(session.list.items.isEmpty)
        #expect(screen.mode == .browsing)
    }

    @Test("a filter that hides every item says how to get them back")
    func emptyFilter() {
        let (_, screen, terminal) = makeScreen(["a"])
        screen.type([.character("f"), .character("f")])
        #expect(terminal.rows[1] == "   no done items: press f to change the filter")
        screen.handle(.character("f"))
        #expect(terminal.rows[1] == ">  1. [ ] a")
    }

    @Test("the list scrolls to keep the cursor on screen")
    func scrolling() {
        let (_, screen, terminal) = makeScreen((1...20).map { "item \($0)" }, width: 40, height: 8)
        #expect(terminal.rows[1...4] == [">  1. [ ] item 1", "   2. [ ] item 2", "   3. [ ] item 3", "   4. [ ] item 4"])
        screen.handle(.end)
        #expect(terminal.rows[4] == "> 20. [ ] item 20")
        #expect(terminal.rows[1] == "  17. [ ] item 17")
        screen.handle(.home)
        #expect(terminal.rows[1] == ">  1. [ ] item 1")
    }

    @Test("the help is paged when it is longer than the list area, and any other key leaves it")
    func helpPages() {
        let (_, screen, terminal) = makeScreen(["a"], width: 100, height: 10)
        screen.handle(.character("?"))
        #expect(terminal.rows[1] == "Keys:")
        #expect(terminal.rows[8].hasSuffix("help 1/3 · Space: more · ↑: back · other keys: leave"))
        screen.handle(.character(" "))
        #expect(screen.mode == .help(page: 1))
        screen.handle(.up)
        #expect(screen.mode == .help(page: 0))
        screen.handle(.character("z"))
        #expect(screen.mode == .browsing)
        #expect(terminal.rows[1] == ">  1. [ ] a")
        #expect(terminal.rows[2] == "")
    }

    @Test("a resize lays the screen out again, and a tiny window asks to be made larger")
    func resize() {
        let (_, screen, terminal) = makeScreen(["a", "b"], width: 40, height: 8)
        screen.resize(width: 50, height: 10)
        #expect(terminal.rows.count == 10)
        #expect(terminal.rows[1] == ">  1. [ ] a")
        #expect(terminal.rows[9] == String(Keymap.helpLine.prefix(49)) + "…")
        screen.resize(width: 10, height: 3)
        #expect(terminal.rows[0] == "make the …")
        #expect(screen.handle(.character("x")))
        screen.resize(width: 40, height: 8)
        #expect(terminal.rows[1] == ">  1. [x] a")
    }

    @Test("a key that does nothing says so")
    func unboundKey() {
        let (_, screen, terminal) = makeScreen(["a"])
        screen.handle(.character("z"))
        #expect(terminal.rows[10].hasSuffix("z does nothing here; press ? for every key"))
    }
}
