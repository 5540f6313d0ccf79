import Testing
@testable import TodoCore

@Suite("PipedRunner")
struct PipedRunnerTests {
    final class Transcript {
        var output: [String] = []
        var errors: [String] = []
    }

    func run(_ lines: [String], list: TodoList = TodoList()) -> (Transcript, Int32, TodoSession) {
        let transcript = Transcript()
        let session = TodoSession(list)
        let runner = PipedRunner(session: session, output: { transcript.output.append($0) },
                                 errors: { transcript.errors.append($0) })
        return (transcript, runner.run(lines: lines), session)
    }

    @Test("each change prints what it did, the list, and the redraw count")
    func changes() {
        let (transcript, status, _) = run(["add milk", "add eggs", "toggle 1"])
        #expect(transcript.output == [
            "added \"milk\" as item 1", "   1. [ ] milk", "redrew 1 of 1 row · 1 of 1 left",
            "added \"eggs\" as item 2", "   1. [ ] milk", "   2. [ ] eggs", "redrew 1 of 2 rows · 2 of 2 left",
            "item 1 \"milk\" is done", "   1. [x] milk", "   2. [ ] eggs", "redrew 1 of 2 rows · 1 of 2 left",
        ])
        #expect(transcript.errors.isEmpty)
        #expect(status == 0)
    }

    @Test("a quiet runner prints one line per command, not the list; list and help still print")
    func quiet() {
        let transcript = Transcript()
        let runner = PipedRunner(session: TodoSession(), quiet: true, output: { transcript.output.append($0) },
                                 errors: { transcript.errors.append($0) })
        let status = runner.run(lines: (1...200).map { "add item \($0)" } + ["done 2", "done 2", "undone 9", "toggle 1", "list"])
        #expect(transcript.output.count == 200 + 4 + 201)
        #expect(transcript.output[199] == "added \"item 200\" as item 200")
        #expect(transcript.output[200...203] == [
            "item 2 \"item 2\" is done", "item 2 \"item 2\" is already done",
            "item 9 \"item 9\" is already not done", "item 1 \"item 1\" is done",
        ])
        #expect(transcript.output[204] == "   1. [x] item 1")
        #expect(transcript.output.last == "198 of 200 left")
        #expect(!transcript.output.contains { $0.hasPrefix("redrew") })
        #expect(transcript.errors.isEmpty)
        #expect(status == 0)

        runner.run(lines: ["toggle x"])
        #expect(transcript.errors == ["line 206: toggle needs an item number, like: toggle 2 (not \"x\")"])
    }

    @Test("a refused line names its line number, changes nothing, and makes the exit status 1")
    func refused() {
        let (transcript, status, session) = run(["add milk", "frob", "toggle 3", "list"])
        #expect(transcript.errors == [
            "line 2: unknown command \"frob\"; type \"help\" for the list of commands",
            "line 3: there is no item 3: the list shows only item 1",
        ])
        #expect(transcript.output.suffix(2) == ["   1. [ ] milk", "1 of 1 left"])
        #expect(session.list == TodoList(titles: ["milk"]))
        #expect(status == 1)
    }

    @Test("an empty list and an empty filter say so")
    func emptyLists() {
        let (transcript, _, _) = run(["list", "add a", "filter done"], list: TodoList())
        #expect(transcript.output.first == "   (no items)")
        #expect(transcript.output.suffix(3) == [
            "showing done items", "   (no done items)", "redrew 0 of 0 rows, cleared 1 · 1 of 1 left · showing done (0)",
        ])
    }

    @Test("quit stops reading; notes like \"nothing to undo\" are not failures")
    func quitAndNotes() {
        let (transcript, status, session) = run(["undo", "quit", "add never"])
        #expect(transcript.output == ["nothing to undo"])
        #expect(session.list.items.isEmpty)
        #expect(status == 0)
    }

    @Test("help prints the command reference")
    func help() {
        let (transcript, _, _) = run(["help"])
        #expect(transcript.output == [TodoCommand.reference])
    }
}
