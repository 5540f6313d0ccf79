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
            "redrew 2 of 2 rows · ? shows every key",
            Keymap.helpLine(width: 100),
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
        #expect(screen.lastRedraw?.description == "redrew 1 of 18 rows")
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
        #expect(terminal.rows[9] == Keymap.helpLine(width: 50))
        screen.resize(width: 10, height: 3)
        #expect(terminal.rows.prefix(3) == ["too small:", "10×3,", "needs 20×5"])
        #expect(screen.handle(.character("x")))
        screen.resize(width: 40, height: 8)
        #expect(terminal.rows[1] == ">  1. [x] a")
    }

    @Test("a key that does nothing says so")
    func unboundKey() {
        let (_, screen, terminal) = makeScreen(["a"])
        screen.handle(.character("z"))
        #expect(terminal.rows[10].hasSuffix("z does nothing here; ? shows every key"))
    }

    @Test("rows of CJK and emoji titles never take more columns than the screen has",
          arguments: [20, 27, 33, 40, 80])
    func wideTitles(width: Int) {
        let titles = ["牛乳を買う、それから卵とパンも", "👩‍💻 write the 報告書 before Friday 🇫🇷🇯🇵", "한국어 수업 준비하기 그리고 복습",
                      "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ"]
        let (_, screen, terminal) = makeScreen(titles, width: width, height: 10)
        screen.type([.character("x"), .down])
        for (row, text) in terminal.rows.enumerated() {
            #expect(text.terminalColumns <= width, "row \(row): \(text)")
        }
        #expect(terminal.rows[1].hasPrefix(" ") && terminal.rows[1].contains("[x] 牛乳"))
        #expect(terminal.rows[2].hasPrefix(">  2. [ ] 👩‍💻"))
    }

    @Test("wide input keeps the line editor and its cursor inside the width")
    func wideInput() {
        let (session, screen, terminal) = makeScreen(["milk"], width: 24, height: 8)
        screen.handle(.character("a"))
        screen.type("買い物リスト 👩‍💻👩‍💻 牛乳と卵")
        #expect(terminal.rows[7].terminalColumns < 24)
        #expect(terminal.rows[7].hasSuffix("牛乳と卵"))
        #expect(screen.cursorPosition?.column == terminal.rows[7].terminalColumns)
        screen.type([.home, .right, .right])
        #expect(terminal.rows[7].hasPrefix("add: 買い物リスト"))
        #expect(screen.cursorPosition?.column == 5 + 4)
        screen.handle(.enter)
        #expect(session.shownTitles.last == "買い物リスト 👩‍💻👩‍💻 牛乳と卵")
    }

    @Test("at 80 columns the help line shows every hint but the arrows, undo and redo included, and ? lists all keys")
    func hintsAt80() {
        let (_, screen, terminal) = makeScreen(["a"], width: 80, height: 24)
        let line = terminal.rows[23]
        #expect(line.terminalColumns <= 80)
        #expect(line.hasPrefix("? help  q quit"))
        for hint in Keymap.hints where hint != "↑↓ select" { #expect(line.contains(hint), "\(hint) is missing") }
        #expect(line.contains("u undo") && line.contains("r redo"))
        #expect(!line.contains("…"))
        screen.handle(.character("?"))
        var pages = ""
        while case .help = screen.mode {
            pages += terminal.rows[1...20].joined(separator: "\n") + "\n"
            screen.handle(.character(" "))
        }
        for binding in Keymap.bindings { #expect(pages.contains(binding.explanation)) }
    }

    @Test("a narrow help line drops whole hints, never half of one")
    func narrowHints() {
        for width in 20...100 {
            let line = Keymap.helpLine(width: width)
            #expect(line.terminalColumns <= width)
            #expect(line.hasPrefix("? help"))
            for hint in line.components(separatedBy: "  ") { #expect(Keymap.hints.contains(hint)) }
        }
    }

    @Test("a notice about a file set aside is shown whole at 80 columns, backup path included, until a key")
    func noticeAt80() {
        let path = "/home/someone/projects/lists/.stillwater-todo.json"
        let backup = path + ".corrupt-20250101-120000"
        let notice = "\(path) was not a todo list (line 1: not JSON); it was renamed to \(backup), and the list starts empty"
        let (session, screen, terminal) = makeScreen(["milk"], width: 80, height: 24)
        screen.showNotice(notice)
        #expect(screen.mode == .notice(page: 0))
        #expect(terminal.rows[1] == "Notice:")
        let shown = terminal.rows[2...20].filter { !$0.isEmpty }
        #expect(shown.count > 1)
        for line in shown { #expect(line.terminalColumns <= 80) }
        #expect(shown.contains { $0.contains(backup) })
        #expect(shown.joined(separator: " ") == notice)
        #expect(terminal.styles[2] == .warning)
        #expect(terminal.rows[22].hasSuffix("any key goes back"))
        // The key that dismisses the notice does nothing else.
        screen.handle(.character("d"))
        #expect(screen.mode == .browsing)
        #expect(session.shownTitles == ["milk"])
        #expect(terminal.rows[1] == ">  1. [ ] milk")
        #expect(terminal.rows[2] == "")
    }

    @Test("a notice longer than the list area is paged, and a resize wraps it again")
    func longNotice() {
        let words = (1...60).map { "word\($0)" }
        let (_, screen, terminal) = makeScreen(["milk"], width: 60, height: 8)
        screen.showNotice(words.joined(separator: " "))
        #expect(terminal.rows[6].contains("notice 1/3 · Space: more"))
        var seen: [String] = []
        for page in 0..<3 {
            #expect(screen.mode == .notice(page: page))
            seen += terminal.rows[1...4].filter { !$0.isEmpty && $0 != "Notice:" }
            screen.handle(.character(" "))
        }
        #expect(screen.mode == .browsing)
        #expect(seen.joined(separator: " ") == words.joined(separator: " "))
        screen.showNotice("short")
        screen.resize(width: 40, height: 10)
        #expect(terminal.rows[1...2] == ["Notice:", "short"])
        #expect(screen.mode == .notice(page: 0))
    }

    @Test("Ctrl-L resets the redraw count, so the status never shows the count of an older change")
    func redrawResetsCount() {
        let (_, screen, terminal) = makeScreen(["a", "b", "c"], width: 60, height: 10)
        screen.handle(.character("x"))
        #expect(terminal.rows[8].hasPrefix("redrew 1 of 3 rows · "))
        screen.handle(.control("l"))
        #expect(screen.lastRedraw == nil)
        #expect(terminal.rows[8] == "drew the whole screen again")
        screen.handle(.character("z"))
        #expect(terminal.rows[8] == "z does nothing here; ? shows every key")
        screen.handle(.down)
        #expect(screen.lastRedraw?.description == "redrew 2 of 3 rows")
        #expect(terminal.rows[8] == "redrew 2 of 3 rows")
        screen.resize(width: 70, height: 12)
        #expect(screen.lastRedraw == nil)
        #expect(!terminal.rows[10].contains("redrew"))
    }

    @Test("a key on the rows that leaves them as they were says it redrew none, not the count of an older change")
    func unchangedRowsRedrawNone() {
        let (_, screen, terminal) = makeScreen(["a", "b", "c"], width: 60, height: 10)
        screen.type([.down, .down])
        #expect(terminal.rows[8] == "redrew 2 of 3 rows")
        screen.handle(.down)                    // already on the last row
        #expect(terminal.rows[8] == "redrew 0 of 3 rows")
        screen.handle(.character("J"))          // the last item cannot move down
        #expect(terminal.rows[8] == "redrew 0 of 3 rows · \"c\" is already at the bottom")
        screen.handle(.character("x"))
        #expect(terminal.rows[8] == "redrew 1 of 3 rows · \"c\" is done")
    }

    // MARK: Small and large screens

    @Test("at 40×10 and 80×24 every row fits: the header, the rows, the status and whole key hints",
          arguments: [(40, 10), (80, 24)])
    func fitsTheWindow(width: Int, height: Int) {
        let long = "牛乳を買う and a title far longer than any screen this test draws it on"
        let (_, screen, terminal) = makeScreen(["Buy milk", "eggs", long], width: width, height: height)
        screen.handle(.character("f"))
        #expect(terminal.rows.allSatisfy { $0.terminalColumns <= width }, "\(terminal.rows)")
        let full = "Stillwater todo · 3 of 3 left · showing active (3)"
        #expect(terminal.rows[0] == (full.terminalColumns <= width ? full : "3 of 3 left · showing active (3)"))
        #expect(terminal.rows[3] == "   3. [ ] \(long)".clipped(toColumns: width))
        #expect(terminal.status == "redrew 0 of 3 rows · showing active items")
        let hints = terminal.rows[height - 1]
        #expect(hints == Keymap.helpLine(width: width))
        #expect(hints.components(separatedBy: "  ").allSatisfy(Keymap.hints.contains), "only whole hints: \(hints)")
        #expect(hints.hasPrefix("? help  q quit  x done  a add  e edit"))
    }

    @Test("the key reference: two aligned columns when wide, one column when narrow, every explanation whole",
          arguments: [20, 40, 60, 80, 200])
    func referenceColumns(width: Int) {
        let lines = Keymap.reference(width: width, indent: 2)
        #expect(lines.allSatisfy { $0.terminalColumns <= width }, "\(lines)")
        let keys = Keymap.bindings.map { $0.keys.map(\.description).joined(separator: ", ") }
        let column = 2 + (keys.map(\.terminalColumns).max() ?? 0) + 2
        var remaining = lines[...]
        for (binding, keys) in zip(Keymap.bindings, keys) {
            let first = remaining.popFirst() ?? ""
            if width - column >= 20 {
                // Two columns: the keys, padded, and the explanation from one column for every binding.
                #expect(first.hasPrefix("  " + keys + "  "))
                var explanation = [String(first.dropFirst(column))]
                while let next = remaining.first, next.hasPrefix(String(repeating: " ", count: column)) {
                    explanation.append(String(next.dropFirst(column)))
                    remaining.removeFirst()
                }
                #expect(explanation.allSatisfy { !$0.hasPrefix(" ") }, "aligned: \(explanation)")
                #expect(explanation.joined(separator: " ") == binding.explanation)
            } else {
                // One column: the keys on their own line, the explanation indented below.
                #expect(first == "  " + keys)
                var explanation: [String] = []
                while let next = remaining.first, next.hasPrefix("    ") {
                    explanation.append(String(next.dropFirst(4)))
                    remaining.removeFirst()
                }
                #expect(explanation.joined(separator: " ") == binding.explanation)
            }
        }
        #expect(remaining.isEmpty)
        #expect((width - column >= 20) == (width >= 60), "two columns from 60, one below")
    }

    @Test("the ? page at 40×10 and 80×24 shows the reference laid out for the width, page after page",
          arguments: [(40, 10), (80, 24)])
    func helpPageFits(width: Int, height: Int) {
        let (_, screen, terminal) = makeScreen(["a"], width: width, height: height)
        screen.handle(.character("?"))
        var shown: [String] = []
        while case .help = screen.mode {
            #expect(terminal.rows.allSatisfy { $0.terminalColumns <= width })
            let status = terminal.status
            #expect(status.hasPrefix("help ") || status == "any key goes back", "\(status)")
            let listRows = terminal.rows[1...].prefix { !$0.isEmpty }
            shown += listRows.filter { $0 != "Keys:" }
            screen.handle(.character(" "))
        }
        #expect(shown == Keymap.reference(width: width, indent: 2))
    }

    @Test("at 40×10 a failed save's reason is read whole: the status wraps over rows the list gives up, and takes them back after")
    func longStatusWraps() {
        let failing = TodoStorage { file, _, _ in .failure(.readOnly(path: file.path)) }
        let session = TodoSession(TodoList(titles: ["milk", "eggs", "tea", "jam", "rice", "oil"]),
                                  file: TodoFile(path: "/tmp/lists/list.json"), showsCursor: true, storage: failing)
        let terminal = VirtualTerminal(height: 10)
        let screen = TodoScreen(session: session, width: 40, height: 10, output: terminal.receive)
        #expect(terminal.rows[1...6] == [">  1. [ ] milk", "   2. [ ] eggs", "   3. [ ] tea", "   4. [ ] jam", "   5. [ ] rice", "   6. [ ] oil"])
        screen.handle(.character("x"))
        let reason = "w saves elsewhere · not saved: /tmp/lists/list.json is read-only, so nothing was written; the changes are only in memory"
        #expect(terminal.status == reason)
        let statusRows = reason.wrapped(toColumns: 40)
        #expect(statusRows.count == 4)
        #expect(Array(terminal.rows[(9 - statusRows.count)..<9]) == statusRows)
        #expect(terminal.rows[8 - statusRows.count] == "", "a blank row above the status")
        #expect(terminal.rows[1...3] == [">  1. [x] milk", "   2. [ ] eggs", "   3. [ ] tea"])
        #expect(terminal.rows.allSatisfy { $0.terminalColumns <= 40 })
        #expect(terminal.styles[5...8].allSatisfy { $0 == .warning })

        // The ? page keeps the list's rows and says how to turn its pages; the warning is back after it.
        screen.handle(.character("?"))
        #expect(terminal.status.hasPrefix("help 1/"))
        #expect(terminal.rows[1...2] == ["Keys:", "  Up, k"])
        screen.handle(.escape)
        #expect(terminal.status == reason)
    }

    @Test("at 40×10 a status longer than the screen holds keeps one row of the list and ends in …; a short one gives the rows back")
    func statusTakesRowsBack() {
        let (_, screen, terminal) = makeScreen(["milk", "eggs", "tea", "jam", "rice", "oil"], width: 40, height: 10)
        screen.announce(String(repeating: "word ", count: 100))
        #expect(terminal.rows[1] == ">  1. [ ] milk")
        #expect(terminal.rows[2] == "", "the blank row above the status")
        #expect(terminal.rows[3...8].allSatisfy { $0.hasPrefix("redrew") || $0.hasPrefix("word") })
        #expect(terminal.rows[8].hasSuffix("…"))
        screen.announce(String(repeating: "word ", count: 20))
        let status = terminal.status
        let statusRows = status.wrapped(toColumns: 40).count
        #expect(statusRows == 3)
        #expect(terminal.rows[1...(6 - statusRows + 1)].allSatisfy { $0.hasSuffix("milk") || $0.hasSuffix("eggs") || $0.hasSuffix("tea") || $0.hasSuffix("jam") })
        #expect(terminal.rows[7 - statusRows + 1] == "")
        screen.handle(.down)
        #expect(terminal.rows[1...6] == ["   1. [ ] milk", ">  2. [ ] eggs", "   3. [ ] tea", "   4. [ ] jam", "   5. [ ] rice", "   6. [ ] oil"])
        #expect(terminal.rows[7] == "")
        #expect(terminal.rows[8].hasPrefix("redrew 2 of "))
    }

    @Test("a screen below 20×5 says it is too small and what it needs, in as many words as fit")
    func tooSmall() {
        let (_, screen, terminal) = makeScreen(["a"], width: 40, height: 10)
        screen.resize(width: 60, height: 4)
        #expect(terminal.rows.prefix(4) == ["window too small (60×4): make it at least 20×5", "", "", ""])
        screen.resize(width: 19, height: 10)
        #expect(terminal.rows[0...2] == ["window too small", "(19×10): make it at", "least 20×5"])
        #expect(terminal.styles[0] == .warning)
        screen.resize(width: 6, height: 1)
        #expect(terminal.rows.prefix(1) == ["needs…"])
        screen.resize(width: 20, height: 5)
        #expect(terminal.rows.prefix(5) == ["1 of 1 left", ">  1. [ ] a", "", "? shows every key", "? help  q quit"])
    }

    @Test("a merge that keeps a deleted item deleted says so on the status line (two sessions on one file)")
    func mergeNoticeOnScreen() throws {
        let folder = TemporaryFolder()
        let file = TodoFile(path: folder.file("list.json"))
        try file.save(TodoList(titles: ["Buy milk", "eggs"]))
        let here = TodoSession(try file.load().list, file: file, showsCursor: true)
        let there = TodoSession(try file.load().list, file: TodoFile(path: file.path))
        let terminal = VirtualTerminal(height: 10)
        let screen = TodoScreen(session: here, width: 40, height: 10, output: terminal.receive)
        _ = try there.perform(.done(1))
        screen.handle(.character("d"))
        #expect(here.shownTitles == ["eggs"])
        #expect(terminal.status.hasSuffix("Merged: \"Buy milk\" stays deleted (ticked in another window)"))
        #expect(try file.load().list.items.map(\.title) == ["eggs"])
        // The merge kept this window's list, so the next change is a plain save: no second merge, no notice.
        screen.handle(.character("x"))
        #expect(here.mergeNotice.value == nil)
        #expect(try file.load().list.items.map { "\($0.title) \($0.isDone)" } == ["eggs true"])
        #expect(terminal.status == "redrew 1 of 1 row · \"eggs\" is done")
    }
}
