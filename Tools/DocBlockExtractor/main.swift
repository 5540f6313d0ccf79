// Writes one Swift Testing file per ```swift block of a markdown file, or of the `///` doc comments of
// a Swift source file.
//
// Usage: DocBlockExtractor [--module MODULE] INPUT NAME OUTPUT…
// INPUT is a markdown file, or a Swift source file of MODULE (whose tests then import MODULE). NAME is how
// tests name the file (README.md); there is one OUTPUT path per block, in order, as the build plugin
// declared them.
import DocBlockKit
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
var module: String?
if arguments.first == "--module", arguments.count > 1 {
    module = arguments[1]
    arguments.removeFirst(2)
}
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: DocBlockExtractor [--module MODULE] INPUT NAME OUTPUT…\n".utf8))
    exit(2)
}
let inputPath = arguments[0]
let name = arguments[1]
let outputs = Array(arguments.dropFirst(2))

let text = try String(contentsOfFile: inputPath, encoding: .utf8)
// A Swift source file contributes the examples of its doc comments.
let markdown = inputPath.hasSuffix(".swift") ? DocBlocks.docCommentMarkdown(swiftSource: text) : text
let blocks = DocBlocks.extract(markdown: markdown, file: name)
guard blocks.count == outputs.count else {
    FileHandle.standardError.write(Data(
        "error: \(name) has \(blocks.count) Swift blocks but the plugin declared \(outputs.count) outputs\n".utf8))
    exit(1)
}

var chain: [DocBlock] = []
for (block, output) in zip(blocks, outputs) {
    chain = block.mode == .continues ? chain + [block] : [block]
    let source = TestFileWriter.source(for: chain, module: module)
    // Rewrite only what changed, so an edit to one block recompiles one file.
    if (try? String(contentsOfFile: output, encoding: .utf8)) != source {
        try source.write(toFile: output, atomically: true, encoding: .utf8)
    }
}
