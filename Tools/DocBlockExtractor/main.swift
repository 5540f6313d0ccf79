// Writes the Swift files that run and check every ```swift block of a markdown file, or of the `///` doc
// comments of a Swift source file.
//
// Usage: DocBlockExtractor [--module MODULE | --imports-implied | --with FILE…] INPUT NAME OUTPUT…
// INPUT is a markdown file, or a Swift source file of MODULE (whose tests then import MODULE). NAME is how
// tests name the file (README.md). There is one OUTPUT path per block, in order, as the build plugin
// declared them; a markdown file has one more, last: the runner holding the tests of all its blocks
// (each block's own file imports only what the block does, as pasted). With --imports-implied, a markdown
// file is written the way doc comments are: one file per block, with the standard imports and its test.
// A Swift INPUT given without --module is a tutorial's code file: one block, compiled as pasted, after the
// files named by --with (the code the reader has from earlier sections).
import DocBlockKit
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
var module: String?
var importsImplied = false
var companions: [String] = []
while arguments.first == "--with", arguments.count > 1 {
    companions.append(arguments[1])
    arguments.removeFirst(2)
}
if arguments.first == "--module", arguments.count > 1 {
    module = arguments[1]
    arguments.removeFirst(2)
} else if arguments.first == "--imports-implied" {
    importsImplied = true
    arguments.removeFirst()
}
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data(
        "usage: DocBlockExtractor [--module MODULE | --imports-implied | --with FILE…] INPUT NAME OUTPUT…\n".utf8))
    exit(2)
}
let inputPath = arguments[0]
let name = arguments[1]
let outputs = Array(arguments.dropFirst(2))

let text = try String(contentsOfFile: inputPath, encoding: .utf8)
// A Swift source file contributes the examples of its doc comments; a tutorial's code file is one block.
let markdown: String
if inputPath.hasSuffix(".swift"), module == nil {
    let earlier = try companions.map { try String(contentsOfFile: $0, encoding: .utf8) }
    markdown = "```swift\n" + (earlier + [text]).joined(separator: "\n") + "\n```\n"
} else {
    markdown = inputPath.hasSuffix(".swift") ? DocBlocks.docCommentMarkdown(swiftSource: text) : text
}
let blocks = DocBlocks.extract(markdown: markdown, file: name)
// A markdown file has one more output than blocks: the runner that holds their tests.
let asPasted = module == nil && !importsImplied
let runner = asPasted ? outputs.last : nil
guard blocks.count + (runner == nil ? 0 : 1) == outputs.count else {
    FileHandle.standardError.write(Data(
        "error: \(name) has \(blocks.count) Swift blocks but the plugin declared \(outputs.count) outputs\n".utf8))
    exit(1)
}

/// Writes `source` to `output` only when it changed, so an edit to one block recompiles one file.
func write(_ source: String, to output: String) throws {
    if (try? String(contentsOfFile: output, encoding: .utf8)) != source {
        try source.write(toFile: output, atomically: true, encoding: .utf8)
    }
}

var chains: [[DocBlock]] = []
for block in blocks {
    chains.append(block.mode == .continues ? (chains.last ?? []) + [block] : [block])
}
for (chain, output) in zip(chains, outputs) {
    if asPasted {
        try write(TestFileWriter.blockSource(for: chain), to: output)
    } else {
        try write(TestFileWriter.source(for: chain, module: module), to: output)
    }
}
if let runner {
    try write(TestFileWriter.runnerSource(for: chains, file: name), to: runner)
}
