import Foundation
import Testing
@testable import TodoCore

@Suite("TodoFile")
struct TodoFileTests {
    let folder = TemporaryFolder()
    var path: String { folder.file("todo.json") }

    @Test("a list survives a save and a load")
    func roundTrip() throws {
        var list = TodoList(titles: ["milk", "eggs", "naïve café ☕️", "quote \" and \\ backslash"])
        list.items[1].isDone = true
        list.items.remove(at: 0)
        let file = TodoFile(path: path)
        try file.save(list)
        #expect(try file.load() == .loaded(list))
        #expect(try file.load().list.nextID == 5)
    }

    @Test("the file is readable JSON with a format and a version")
    func format() throws {
        try TodoFile(path: path).save(TodoList(titles: ["milk"]))
        let text = try #require(folder.read("todo.json"))
        #expect(text.contains("\"format\" : \"stillwater-todo\""))
        #expect(text.contains("\"version\" : 1"))
        #expect(text.contains("\"done\" : false"))
    }

    @Test("a missing file is an empty list, and nothing is created until a save")
    func missing() throws {
        #expect(try TodoFile(path: path).load() == .missing)
        #expect(folder.names.isEmpty)
    }

    @Test("a file in a folder that does not exist is refused at once")
    func missingFolder() {
        let file = TodoFile(path: folder.file("nope/todo.json"))
        #expect(throws: TodoFileError.folderMissing(path: file.path, folder: folder.file("nope"))) { try file.load() }
    }

    @Test("saving replaces the file through a rename and leaves no temporary file")
    func atomicSave() throws {
        let file = TodoFile(path: path)
        try file.save(TodoList(titles: ["a"]))
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        try file.save(TodoList(titles: ["a", "b"]))
        let after = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        #expect(before != after, "a new file (inode) renamed over the old one, not the old one rewritten")
        #expect(folder.names == ["todo.json"])
        #expect(try file.load().list.items.count == 2)
    }

    @Test("a new file is private; a saved-over file keeps its permissions")
    func permissions() throws {
        let file = TodoFile(path: path)
        try file.save(TodoList())
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
        try file.save(TodoList(titles: ["a"]))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o640)
    }

    @Test("a failed save leaves the old file and no temporary file")
    func failedSave() throws {
        let file = TodoFile(path: path)
        try file.save(TodoList(titles: ["keep me"]))
        try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: folder.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path) }
        #expect(throws: TodoFileError.self) { try file.save(TodoList(titles: ["lost"])) }
        #expect(folder.names == ["todo.json"])
        #expect(try file.load().list.items.map(\.title) == ["keep me"])
    }

    @Test("a damaged todo list (it has the format marker) is set aside under a dated name, untouched", arguments: [
        (#"{"format": "stillwater-todo", "version": 1, "items": [{"id": 1, "title": "a"}]}"#, "item 1 of 1 has no \"done\""),
        (#"{"format": "stillwater-todo", "version": 1, "items": {"id": 1}}"#, "\"items\" is missing or not an array"),
        (#"{"format": "stillwater-todo", "version": 1, "items": [{"id": 1, "title": "a", "done": false}, {"id": 1, "title": "b", "done": true}]}"#,
         "two items have the identity 1"),
        (#"{"format": "stillwater-todo", "version": 0, "items": []}"#, "unknown format version 0"),
        (#"{"format": "stillwater-todo", "version": 1, "items": ["#, "not valid JSON"),
        (#"{"format" : "stillwater-todo", "vers"#, "not valid JSON"),
        (#"{"format": "stillwater-todo", "version": 1, "items": [{"id": 1e400, "title": "a", "done": false}]}"#,
         "not valid JSON: Number 1e400 is not representable in Swift."),
    ])
    func corrupt(contents: String, reason: String) throws {
        folder.write(contents, to: "todo.json")
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let result = try TodoFile(path: path).load(now: now)
        guard case .setAside(let found, let movedTo) = result else {
            Issue.record("expected the file to be set aside, got \(result)")
            return
        }
        #expect(found.contains(reason), "reason: \(found)")
        #expect(movedTo.hasPrefix(path + ".corrupt-2023111"))
        #expect(result.list == TodoList())
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(FileManager.default.contents(atPath: movedTo) == Data(contents.utf8))
    }

    @Test("a second corrupt file in the same second gets its own name, and the first one is kept")
    func corruptTwice() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        folder.write(#"{"format": "stillwater-todo", "first"#, to: "todo.json")
        let first = try TodoFile(path: path).load(now: now)
        folder.write(#"{"format": "stillwater-todo", "second"#, to: "todo.json")
        let second = try TodoFile(path: path).load(now: now)
        guard case .setAside(_, let firstPath) = first, case .setAside(_, let secondPath) = second else {
            Issue.record("expected both files to be set aside")
            return
        }
        #expect(secondPath == firstPath + "-2")
        #expect(folder.read((firstPath as NSString).lastPathComponent)?.hasSuffix("first") == true)
        #expect(folder.read((secondPath as NSString).lastPathComponent)?.hasSuffix("second") == true)
    }

    @Test("after a corrupt file was set aside, saving writes a fresh file beside it")
    func saveAfterCorrupt() throws {
        folder.write(#"{"format": "stillwater-todo", garbage"#, to: "todo.json")
        let file = TodoFile(path: path)
        _ = try file.load()
        try file.save(TodoList(titles: ["new"]))
        #expect(folder.names.count == 2)
        #expect(folder.names.contains { $0.hasPrefix("todo.json.corrupt-") })
        #expect(try file.load().list.items.map(\.title) == ["new"])
    }

    @Test("an empty file holds nothing to lose: it loads as an empty list and is not set aside", arguments: ["", " \n\t"])
    func empty(contents: String) throws {
        folder.write(contents, to: "todo.json")
        #expect(try TodoFile(path: path).load() == .loaded(TodoList()))
        #expect(folder.names == ["todo.json"])
    }

    @Test("a file from a newer version is refused and left alone")
    func newerVersion() {
        folder.write(#"{"format": "stillwater-todo", "version": 2, "items": []}"#, to: "todo.json")
        #expect(throws: TodoFileError.newerVersion(path: TodoFile(path: path).path, version: 2)) {
            try TodoFile(path: path).load()
        }
        #expect(folder.names == ["todo.json"])
    }

    @Test("a folder where the file should be cannot be read, and is left alone")
    func folderInstead() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(throws: TodoFileError.isFolder(path: path)) { try TodoFile(path: path).load() }
        #expect("\(TodoFileError.isFolder(path: path))".contains("is a directory"))
        #expect(folder.names == ["todo.json"])
    }

    @Test("loading cleans titles and raises a nextID that is too small")
    func loadRepairs() throws {
        folder.write("{\"format\": \"stillwater-todo\", \"version\": 1, \"nextID\": 1, \"items\": [{\"id\": 5, \"title\": \" a\\tb \", \"done\": true}, {\"id\": 6, \"title\": \"\\n\", \"done\": false}]}", to: "todo.json")
        let list = try TodoFile(path: path).load().list
        #expect(list.items.map(\.title) == ["a b", "(untitled)"])
        #expect(list.nextID == 7)
    }

    @Test("saving through a symbolic link replaces the file it points to, and keeps the link")
    func symlink() throws {
        try TodoFile(path: path).save(TodoList(titles: ["a"]))
        let link = folder.file("link.json")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        try TodoFile(path: link).save(TodoList(titles: ["a", "b"]))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == path)
        #expect(try TodoFile(path: path).load().list.items.count == 2)
    }
}
