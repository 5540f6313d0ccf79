import Foundation
import Testing
@testable import Stillwater

/// What the compiler says about a conformance to `EffectAction`: each snippet is type-checked against
/// the Stillwater module this test binary was built with.
@Suite("EffectAction's reduce requirement")
struct EffectActionRequirementTests {
    /// The folder of the built modules, beside the test binary.
    static var modules: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("Modules")
    }

    /// Type-checks `source` (after `import Stillwater`); returns whether it compiled and what the compiler
    /// wrote.
    /// With `sil`, also runs the checks made after type-checking (the data-race checks of `sending`);
    /// `arguments` go to the compiler too.
    static func typecheck(
        _ source: String, sil: Bool = false, arguments: [String] = []
    ) throws -> (compiled: Bool, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stillwater-requirement-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("main.swift")
        try ("import Stillwater\n" + source).write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc"] + (sil ? ["-emit-sil", "-o", "/dev/null"] : ["-typecheck"])
            + arguments + ["-swift-version", "6", "-I", modules.path,
                             "-module-cache-path", folder.appendingPathComponent("cache").path, file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus == 0, output)
    }

    @Test("a type that implements neither reduce does not compile; either one alone, or both, does",
          .enabled(if: FileManager.default.fileExists(atPath: modules.appendingPathComponent("Stillwater.swiftmodule").path)))
    func oneReduceIsRequired() throws {
        let neither = try Self.typecheck("""
            enum Idle: EffectAction {
                typealias State = Int
                case idle
            }
            """)
        #expect(!neither.compiled)
        #expect(neither.output.contains("does not conform to protocol 'EffectAction'"), "\(neither.output)")

        // Either reduce alone, or both: one file, so the compiler runs twice in all.
        let either = try Self.typecheck("""
            enum Plain: EffectAction {
                case go
                func reduce(into count: inout Int) -> Effect<Plain> { count += 1; return .none }
            }
            enum Reading: EffectAction {
                case go
                func reduce(into count: inout Int, dependencies: Dependencies) -> Effect<Reading> {
                    count += 1
                    return .none
                }
            }
            enum Both: EffectAction {
                case go
                func reduce(into count: inout Int) -> Effect<Both> { .none }
                func reduce(into count: inout Int, dependencies: Dependencies) -> Effect<Both> { .none }
            }
            var count = 0
            _ = Plain.go.reduce(into: &count)
            _ = Reading.go.reduce(into: &count)
            """)
        #expect(either.compiled, "\(either.output)")
        #expect(!either.output.contains("warning"), "\(either.output)")
    }

    @Test("the deprecated child-part spellings still compile, with a warning that says what to write; dispatch(to:_:) is gone; an action that is not Sendable, plain or effect, cannot be touched after its dispatch",
          .enabled(if: FileManager.default.fileExists(atPath: modules.appendingPathComponent("Stillwater.swiftmodule").path)))
    func deprecatedAndRemoved() throws {
        let deprecated = try Self.typecheck("""
            struct AppState { var todos: [String] = []; var count = 0 }
            enum TodoAction: ChildAction {
                case add(String)
                static var child: WritableKeyPath<AppState, [String]> { \\.todos }
                func reduce(child todos: inout [String]) { if case .add(let title) = self { todos.append(title) } }
            }
            struct Increment: Action { func reduce(_ count: inout Int) { count += 1 } }
            let store = Store(AppState())
            store.dispatch(TodoAction.add("milk"))
            store.dispatch(Increment().lifted(to: \\AppState.count))
            """)
        #expect(deprecated.compiled, "\(deprecated.output)")
        #expect(deprecated.output.contains("'ChildAction' is deprecated: write the part's actions as an Action"), "\(deprecated.output)")
        #expect(deprecated.output.contains("'lifted(to:)' is deprecated: route the part's action"), "\(deprecated.output)")

        let removed = try Self.typecheck("""
            struct Add: Action { let amount: Int; func reduce(_ count: inout Int) { count += amount } }
            let store = Store(0)
            let onAdd = ActionHandle<Int>()
            let routing = onAdd.dispatch(to: store) { Add(amount: $0) }
            """)
        #expect(!removed.compiled)
        #expect(removed.output.contains("has no member 'dispatch'"), "\(removed.output)")

        let sent = try Self.typecheck("""
            // An action that is not Sendable is sent: the caller may not touch it after the dispatch,
            // since another thread may be reducing it.
            final class Counter { var step = 1 }
            struct Bump: EffectAction {
                let counter: Counter
                func reduce(into count: inout Int) -> Effect<Bump> { count += counter.step; return .none }
            }
            func bump(_ store: Store<Int>) {
                let action = Bump(counter: Counter())
                store.dispatch(action)
                action.counter.step = 2
            }
            struct Add: Action {
                let counter: Counter
                func reduce(_ count: inout Int) { count += counter.step }
            }
            func add(_ store: Store<Int>) {
                let action = Add(counter: Counter())
                store.dispatch(action)
                action.counter.step = 2
            }
            """, sil: true)
        #expect(!sent.compiled)
        // Both dispatches, the effect action's and the plain one's.
        #expect(sent.output.components(separatedBy: ": error: sending 'action' risks causing data races").count == 3, "\(sent.output)")
    }

    @Test("a Sendable action can be dispatched again, and a new action of any type dispatched at once",
          .enabled(if: FileManager.default.fileExists(atPath: modules.appendingPathComponent("Stillwater.swiftmodule").path)))
    func plainDispatchSends() throws {
        let again = try Self.typecheck("""
            struct Increment: Action { func reduce(_ count: inout Int) { count += 1 } }
            func twice(_ store: Store<Int>) {
                let action = Increment()
                store.dispatch(action)
                store.dispatch(action)
            }
            func fresh(_ store: Store<Int>) {
                final class Counter { var step = 1 }
                struct Add: Action {
                    let counter: Counter
                    func reduce(_ count: inout Int) { count += counter.step }
                }
                store.dispatch(Add(counter: Counter()))
            }
            """, sil: true)
        #expect(again.compiled, "\(again.output)")
    }
}
