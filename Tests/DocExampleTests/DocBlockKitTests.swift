import Foundation
import Testing
@testable import DocBlockKit

/// The checks behind the generated tests: if these are wrong, a README block could pass while it lies.
@Suite("Prints comments")
struct PrintsCommentTests {
    @Test("all Prints comments are read in order, across continuation lines, with escapes")
    func readsEveryComment() throws {
        let block = [
            #"print("a")"#,
            #"// Prints "a""#,
            #"print("b, \"c\"")"#,
            #"// Prints "b, \"c\"","#,
            #"//        "back\\slash""#,
            #"// an ordinary comment that mentions Prints is not read"#,
        ]
        #expect(try PrintsComment.expectedLines(in: block) == ["a", #"b, "c""#, #"back\slash"#])
    }

    @Test("a block without a Prints comment promises that it prints nothing")
    func noComment() throws {
        #expect(try PrintsComment.expectedLines(in: ["let x = 1"]).isEmpty)
    }

    @Test("a Prints comment with text that is not a literal is an error, not ignored", arguments: [
        #"// Prints (for the last update) "row 3""#,
        #"// Prints "a" "b""#,
        #"// Prints "a","#,
        #"// Prints "open"#,
        #"// Prints 42"#,
    ])
    func unreadable(comment: String) {
        #expect(throws: PrintsComment.Unreadable.self) { try PrintsComment.expectedLines(in: [comment]) }
    }

    @Test("printed lines that differ from the comment are a mismatch that shows both")
    func mismatch() throws {
        #expect(printedMismatch(expected: ["a", "b"], printed: ["a", "b"]) == nil)
        let message = try #require(printedMismatch(expected: ["a", "b"], printed: ["a", "c"]))
        #expect(message.contains("line 2"))
        #expect(message.contains(#"Prints:  "a", "b""#))
        #expect(message.contains(#"printed: "a", "c""#))
        #expect(printedMismatch(expected: [], printed: ["extra"]) != nil)
        #expect(printedMismatch(expected: ["missing"], printed: []) != nil)
    }

    @Test("the fixture with a wrong Prints comment is a mismatch")
    func wrongFixture() throws {
        let fixture = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/WrongPrints.md")
        let blocks = DocBlocks.extract(markdown: try String(contentsOf: fixture, encoding: .utf8), file: "WrongPrints.md")
        let block = try #require(blocks.first)
        #expect(blocks.count == 1)
        #expect(block.mode == .expectMismatch)
        #expect(block.name == "WrongPrints.md:8")
        let expected = try PrintsComment.expectedLines(in: block.lines)
        #expect(printedMismatch(expected: expected, printed: ["one", "two"]) != nil)
    }

    @Test("printed output is split into lines, whatever the separators and terminators")
    func printedOutput() {
        let output = PrintedOutput()
        output.write([1, "two"], separator: " ", terminator: "\n")
        output.write(["a", "b"], separator: "-", terminator: "")
        output.write(["c"], separator: " ", terminator: "\n")
        #expect(output.lines == ["1 two", "a-bc"])
    }
}

@Suite("Markdown blocks")
struct DocBlocksTests {
    static let markdown = """
        # Title
        ```sh
        swift test
        ```
        <!-- doc-test: manifest -->
        ```swift
        .package(path: "..")
        ```

        <!-- doc-test: continues -->
        ```swift
        print(1)
        ```
        <!-- doc-test: skip -->
        ```swift
        ```
        <!-- doc-test: later -->
        ```swift
        ```
        <!-- doc-test: waits for the value, delivered on the main queue -->
        ```swift
        ```
        <!-- doc-test: waits -->
        ```swift
        ```
        """

    @Test("only Swift blocks are read, each with the marker on the line before its fence")
    func markers() {
        let blocks = DocBlocks.extract(markdown: Self.markdown, file: "X.md")
        #expect(blocks.map(\.name) == ["X.md:6", "X.md:11", "X.md:15", "X.md:18", "X.md:21", "X.md:24"])
        #expect(blocks[0].mode == .skip("a Package.swift, built as a package of its own by .ci/quickstart"))
        #expect(blocks[1].mode == .continues)
        #expect(blocks[1].lines == ["print(1)"])
        #expect(blocks[2].problem != nil, "a skip without a reason is reported")
        #expect(blocks[3].problem != nil, "an unknown marker is reported")
        #expect(blocks[4].mode == .waits("for the value, delivered on the main queue"))
        #expect(blocks[5].problem != nil, "a waits marker without a reason is reported")
    }

    @Test("the examples of doc comments keep the line numbers of the source file")
    func docComments() {
        let source = [
            "/// Doubles.",
            "///",
            "/// ```swift",
            "/// print(2 * 21)",
            "/// // Prints \"42\"",
            "///```",
            "func double() {}   /// ```swift is not a doc comment line here",
        ].joined(separator: "\n")
        let blocks = DocBlocks.extract(markdown: DocBlocks.docCommentMarkdown(swiftSource: source), file: "D.swift")
        #expect(blocks == [DocBlock(file: "D.swift", fenceLine: 3, lines: ["print(2 * 21)", "// Prints \"42\""], mode: .run)])
    }

    @Test("a doc comment example imports its module, and a waiting block waits for its lines in its scope")
    func moduleAndWaiting() {
        let block = DocBlock(file: "Sources/M/A.swift", fenceLine: 2,
                             lines: ["let expected = 1", "print(expected)", "// Prints \"1\""],
                             mode: .waits("for the line"))
        let source = TestFileWriter.source(for: [block], module: "TodoCore")
        #expect(source.contains("import TodoCore\n"))
        #expect(source.contains("await printed.waitForLines(1)   // for the line\n"))
        // In order: the block's own scope (its `expected` never meets the check's), its statements, the
        // wait while its names are kept alive, then the check.
        let order = ["do {", "let expected = 1", "waitForLines", "withExtendedLifetime((expected))",
                     "let expected: [String]"]
        let positions = order.compactMap { source.range(of: $0)?.lowerBound }
        #expect(positions.count == order.count && positions == positions.sorted())
        #expect(!TestFileWriter.source(for: [block]).contains("import TodoCore"), "markdown imports no module")
    }

    @Test("a markdown block compiles as pasted: its file has only its own imports, its test is in the runner")
    func markdownBlockAsPasted() {
        let block = DocBlock(file: "A.md", fenceLine: 4,
                             lines: ["import Stillwater", "let total = MutableProperty(1)", "print(total.value)",
                                     "// Prints \"1\""], mode: .run)
        let file = TestFileWriter.blockSource(for: [block])
        let imports = file.split(separator: "\n").filter { $0.hasPrefix("import ") }
        #expect(imports == ["import DocBlockKit", "import Stillwater"])
        #expect(file.contains("\nfunc docBlock_A_md_4() async throws -> [String] {"))
        #expect(!file.contains("@Test"))
        let runner = TestFileWriter.runnerSource(for: [[block]], file: "A.md")
        #expect(runner.contains("@Test(\"A.md:4\")"))
        #expect(runner.contains("let printed = try await docBlock_A_md_4()"))
        #expect(runner.contains("let expected: [String] = [\"1\"]"))
        #expect(!runner.contains("import Stillwater"), "the runner sees none of the block's modules")
    }

    @Test("a block whose marker or Prints comment cannot be read becomes a failing test")
    func unreadableBecomesFailure() {
        let blocks = DocBlocks.extract(markdown: Self.markdown, file: "X.md")
        #expect(TestFileWriter.source(for: [blocks[3]]).contains("Issue.record(\"X.md:18: unknown doc-test marker"))
        let badPrints = DocBlock(file: "Y.md", fenceLine: 3, lines: ["// Prints nothing"], mode: .run)
        #expect(TestFileWriter.source(for: [badPrints]).contains("Issue.record(\"Y.md:3: cannot read the Prints"))
        #expect(TestFileWriter.source(for: [blocks[0]]).contains(".disabled("))
    }
}

@Suite("Splitting a block into declarations and statements")
struct SwiftBlockPartsTests {
    @Test("declarations go to file scope as fileprivate, statements into the test, imports on top")
    func split() {
        let parts = SwiftBlockParts([
            "import Foundation",
            "struct A: Equatable { var text = \"}\" }",
            "final class B {",
            "    func f() {}",
            "}",
            "extension A: CustomStringConvertible { var description: String { text } }",
            "extension A { static let empty = A() }",
            "@Test(\"a (named) test\")",
            "func t() {}",
            "private enum C {}",
            "let a = A()",
            "    .self",
            "let list = [1,",
            "2]",
            "print(a, list)",
        ])
        #expect(parts.imports == ["import Foundation"])
        #expect(parts.declarations == [
            "fileprivate struct A: Equatable { var text = \"}\" }",
            "fileprivate final class B {",
            "    func f() {}",
            "}",
            "extension A: CustomStringConvertible { var description: String { text } }",
            "fileprivate extension A { static let empty = A() }",
            "@Test(\"a (named) test\")",
            "fileprivate func t() {}",
            "private enum C {}",
        ])
        #expect(parts.statements == ["let a = A()", "    .self", "let list = [1,", "2]", "print(a, list)"])
        #expect(parts.topLevelNames == ["a", "list"])
    }

    @Test("brackets inside strings, interpolations and comments do not count")
    func nesting() {
        var scanner = NestingScanner()
        scanner.scan(#"let s = "\(f("{")) [" // ( {"#)
        #expect(scanner.isAtTopLevel)
        scanner.scan("let t = (1, /* ) */")
        #expect(!scanner.isAtTopLevel)
        scanner.scan("2)")
        #expect(scanner.isAtTopLevel)
    }
}
