import Foundation
import PackagePlugin

/// Turns every ```swift block of the README, the DocC articles, the test target's own markdown files and
/// the `///` doc comments of the modules the test target depends on into one generated test file, so the
/// examples users read are the examples the suite runs.
///
/// The plugin only counts the blocks, to declare one output per block; `DocBlockExtractor` reads them.
@main
struct DocBlockPlugin: BuildToolPlugin {
    /// Articles whose blocks do not show their imports yet: they are compiled with the imports a doc
    /// comment example gets (Testing, Stillwater, StillwaterTesting), not as pasted. Every other markdown
    /// block compiles with only its own imports. Empty: every article's blocks import what they use; a
    /// name belongs here only while an article is being brought to that, and comes out once it is.
    static let importsNotShownYet: Set<String> = []

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let tool = try context.tool(named: "DocBlockExtractor")
        // (file, the module whose doc comments it holds: nil for markdown)
        var documents: [(URL, module: String?)] = []
        documents.append((root.appending(path: "README.md"), nil))
        documents += markdownFiles(under: root.appending(path: "Sources"), where: { $0.contains(".docc/") })
            .map { ($0, nil) }
        documents += markdownFiles(under: target.directoryURL, where: { _ in true }).map { ($0, nil) }
        for module in documentedModules(of: target) {
            let sources = module.sourceFiles(withSuffix: "swift").map(\.url).sorted { $0.path < $1.path }
            documents += sources.map { ($0, module.name) }
        }

        var commands = try tutorialCodeCommands(root: root, context: context, tool: tool.url)
        commands += try documents.compactMap { document, module in
            let name = relativePath(of: document, in: root)
            let lines = try String(contentsOf: document, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            let count = lines.filter(module == nil ? isOpeningFence : isDocCommentOpeningFence).count
            guard count > 0 else { return nil }
            let stem = name.map { $0.isLetter || $0.isNumber ? $0 : "_" }
            // A markdown file's blocks compile as pasted, each in a file with only its own imports; their
            // tests go in one more file, the document's runner (DocBlockExtractor).
            let asPasted = module == nil && !Self.importsNotShownYet.contains(name)
            let runner = asPasted ? ["tests"] : []
            let outputs = ((1...count).map(String.init) + runner).map {
                context.pluginWorkDirectoryURL.appending(path: "\(String(stem))_\($0).swift")
            }
            let moduleArguments = module.map { ["--module", $0] } ?? (asPasted ? [] : ["--imports-implied"])
            return .buildCommand(
                displayName: "Extracting the Swift blocks of \(name)",
                executable: tool.url,
                arguments: moduleArguments + [document.path(percentEncoded: false), name]
                    + outputs.map { $0.path(percentEncoded: false) },
                inputFiles: [document],
                outputFiles: outputs
            )
        }
        return commands
    }

    /// The code files of the DocC tutorials (`*.docc/Resources/NAME-SS-NN.swift`: tutorial NAME, section
    /// SS, step NN), each compiled as pasted. A file of a later section is compiled together with the last
    /// file of each earlier section, which is the code the reader has by then (the tests of section 2 need
    /// the view model of section 1).
    func tutorialCodeCommands(root: URL, context: PluginContext, tool: URL) throws -> [Command] {
        let files = FileManager.default.enumerator(at: root.appending(path: "Sources"), includingPropertiesForKeys: nil)?
            .allObjects.compactMap { $0 as? URL }
            .filter { $0.path.contains(".docc/Resources/") && $0.pathExtension == "swift" }
            .sorted { $0.path < $1.path } ?? []
        // (tutorial, section, file), read from the name.
        let steps: [(tutorial: String, section: Int, file: URL)] = files.compactMap { file in
            let parts = file.deletingPathExtension().lastPathComponent.split(separator: "-")
            guard parts.count >= 3, let section = Int(parts[parts.count - 2]) else { return nil }
            return (parts.dropLast(2).joined(separator: "-"), section, file)
        }
        return steps.map { step in
            let earlier = Dictionary(grouping: steps.filter { $0.tutorial == step.tutorial && $0.section < step.section },
                                     by: \.section)
                .sorted { $0.key < $1.key }.compactMap { $0.value.last?.file }
            let name = relativePath(of: step.file, in: root)
            let stem = String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
            let outputs = ["1", "tests"].map { context.pluginWorkDirectoryURL.appending(path: "\(stem)_\($0).swift") }
            return .buildCommand(
                displayName: "Extracting the tutorial code \(name)",
                executable: tool,
                arguments: earlier.flatMap { ["--with", $0.path(percentEncoded: false)] }
                    + [step.file.path(percentEncoded: false), name] + outputs.map { $0.path(percentEncoded: false) },
                inputFiles: [step.file] + earlier,
                outputFiles: outputs
            )
        }
    }

    /// The modules whose doc comment examples become tests: every source module the test target depends
    /// on directly. Each generated test imports the module its example documents.
    func documentedModules(of target: Target) -> [SourceModuleTarget] {
        target.dependencies.compactMap { dependency in
            guard case .target(let module) = dependency else { return nil }
            return module as? SourceModuleTarget
        }
    }

    /// The same rule as `DocBlocks.isOpeningFence` (a plugin cannot link that library); the extractor
    /// stops with an error if the two ever count differently.
    func isOpeningFence(_ line: Substring) -> Bool {
        line.drop(while: { $0 == " " }).hasPrefix("```swift")
    }

    /// The same rule for a Swift source file, whose blocks are in `///` doc comments
    /// (`DocBlocks.docCommentMarkdown`).
    func isDocCommentOpeningFence(_ line: Substring) -> Bool {
        let text = line.drop(while: \.isWhitespace)
        return text.hasPrefix("///") && isOpeningFence(text.dropFirst(3))
    }

    func markdownFiles(under directory: URL, where keep: (String) -> Bool) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        let files = (enumerator?.allObjects as? [URL] ?? []).filter {
            $0.pathExtension == "md" && keep($0.path(percentEncoded: false))
        }
        return files.sorted { $0.path < $1.path }
    }

    func relativePath(of file: URL, in root: URL) -> String {
        let path = file.standardizedFileURL.path(percentEncoded: false)
        let base = root.standardizedFileURL.path(percentEncoded: false)
        let prefix = base.hasSuffix("/") ? base : base + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : file.lastPathComponent
    }
}
