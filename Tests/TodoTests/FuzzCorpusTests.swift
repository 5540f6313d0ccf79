import Foundation
import Testing
@testable import TodoCore

/// The fuzz target's corpus (`Tests/TodoTests/FuzzCorpus`: good, bad and hostile files, and what
/// libFuzzer found that reaches new code), run through the reader and the loader on every `swift test`.
@Suite("todo file reader over the fuzz corpus")
struct FuzzCorpusTests {
    static let corpus: String = {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        return here.appendingPathComponent("FuzzCorpus").path
    }()

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: corpus)) ?? []).sorted()

    @Test("the corpus is there, with good, bad and hostile files")
    func corpusPresent() {
        #expect(Self.names.count >= 39)
        #expect(Self.names.contains("good-two-items.json") && Self.names.contains("huge-id.json")
                && Self.names.contains("deep-nesting.json"))
    }

    @Test("every file gets one answer from the reader, and a list reads back as itself")
    func promisesKept() throws {
        for name in Self.names {
            let data = try #require(FileManager.default.contents(atPath: (Self.corpus as NSString).appendingPathComponent(name)))
            #expect(TodoFormat.brokenPromise(in: data) == nil, "\(name)")
        }
    }

    @Test("loading any file either reads it, or leaves its bytes as they were (set aside whole, or untouched)")
    func loadingLosesNothing() throws {
        for name in Self.names {
            let data = try #require(FileManager.default.contents(atPath: (Self.corpus as NSString).appendingPathComponent(name)))
            let folder = TemporaryFolder()
            let path = folder.file("todo.json")
            #expect(FileManager.default.createFile(atPath: path, contents: data))
            switch Result(catching: { () throws(TodoFileError) in try TodoFile(path: path).load() }) {
            case .success(.loaded):
                #expect(FileManager.default.contents(atPath: path) == data, "\(name) was changed by loading")
            case .success(.setAside(_, let movedTo)):
                #expect(FileManager.default.contents(atPath: movedTo) == data, "\(name) was not set aside whole")
                #expect(folder.names.count == 1)
            case .success(.missing):
                Issue.record("\(name) exists, yet loaded as missing")
            case .failure:
                #expect(FileManager.default.contents(atPath: path) == data, "\(name) was changed by a failed load")
                #expect(folder.names == ["todo.json"])
            }
        }
    }

    @Test("the classification of the hand-written files is the documented one", arguments: [
        ("good-two-items.json", "list"), ("good-unknown-fields.json", "list"), ("empty.json", "empty"),
        ("plain-text.txt", "notATodoList"), ("other-app.json", "notATodoList"), ("empty-array.json", "notATodoList"),
        ("huge-id.json", "badIdentity"), ("beyond-int-id.json", "damaged"), ("truncated.json", "damaged"),
        ("duplicate-ids.json", "damaged"), ("version-newer.json", "newerVersion"),
    ])
    func classification(name: String, kind: String) throws {
        let data = try #require(FileManager.default.contents(atPath: (Self.corpus as NSString).appendingPathComponent(name)))
        let found = switch TodoFormat.parse(data) {
        case .empty: "empty"
        case .list: "list"
        case .notATodoList: "notATodoList"
        case .damaged: "damaged"
        case .newerVersion: "newerVersion"
        case .badIdentity: "badIdentity"
        }
        #expect(found == kind)
    }
}
