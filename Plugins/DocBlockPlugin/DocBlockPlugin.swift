import Foundation
import PackagePlugin

/// Turns every ```swift block of the README, the DocC articles and the test target's own markdown files
/// into one generated test file, so the examples users read are the examples the suite runs.
///
/// The plugin only counts the blocks, to declare one output per block; `DocBlockExtractor` reads them.
@main
struct DocBlockPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let tool = try context.tool(named: "DocBlockExtractor")
        var documents = [root.appending(path: "README.md")]
        documents += markdownFiles(under: root.appending(path: "Sources"), where: { $0.contains(".docc/") })
        documents += markdownFiles(under: target.directoryURL, where: { _ in true })

        return try documents.compactMap { document in
            let name = relativePath(of: document, in: root)
            let count = try String(contentsOf: document, encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
                .filter(isOpeningFence).count
            guard count > 0 else { return nil }
            let stem = name.map { $0.isLetter || $0.isNumber ? $0 : "_" }
            let outputs = (1...count).map {
                context.pluginWorkDirectoryURL.appending(path: "\(String(stem))_\($0).swift")
            }
            return .buildCommand(
                displayName: "Extracting the Swift blocks of \(name)",
                executable: tool.url,
                arguments: [document.path(percentEncoded: false), name] + outputs.map { $0.path(percentEncoded: false) },
                inputFiles: [document],
                outputFiles: outputs
            )
        }
    }

    /// The same rule as `DocBlocks.isOpeningFence` (a plugin cannot link that library); the extractor
    /// stops with an error if the two ever count differently.
    func isOpeningFence(_ line: Substring) -> Bool {
        line.drop(while: { $0 == " " }).hasPrefix("```swift")
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
