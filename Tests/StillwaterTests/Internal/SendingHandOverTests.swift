import Foundation
import Testing
@testable import Stillwater

/// What the compiler says when a value that is not `Sendable` is handed to a lock, a constant property, a
/// dispatcher or a history and still used by the caller: each snippet is compiled through the data-race
/// checks against the Stillwater module this test binary was built with.
@Suite("Sending hand-over into locks")
struct SendingHandOverTests {
    static var modulesBuilt: Bool {
        FileManager.default.fileExists(
            atPath: EffectActionRequirementTests.modules.appendingPathComponent("Stillwater.swiftmodule").path)
    }

    /// The package's name as SwiftPM gives it to the compiler (its folder's name, in lower case, with
    /// every character that cannot be in an identifier made `_`: a clone in `ci-clone` is `ci_clone`), so
    /// that a snippet may use the package's `Lock`: the folder that holds the build folder the binary is in.
    static var packageName: String? {
        var folder = EffectActionRequirementTests.modules
        while folder.path != "/" {
            if folder.lastPathComponent.hasPrefix(".build") {
                let name = folder.deletingLastPathComponent().lastPathComponent.lowercased()
                let identifier = String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
                return identifier.first?.isNumber == true ? "_" + identifier : identifier
            }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    @Test("a Lock's state takes in only what the caller no longer holds, and gives out only what it no longer holds",
          .enabled(if: modulesBuilt && packageName != nil))
    func lockChecksTheHandOver() throws {
        let package = ["-package-name", Self.packageName ?? ""]
        let leaks = try EffectActionRequirementTests.typecheck("""
            final class Box { var count = 0 }
            func keep(_ box: Box, in lock: borrowing Lock<[Box]>) {
                lock.withLock { $0.append(box) }
            }
            """, sil: true, arguments: package)
        #expect(!leaks.compiled)
        #expect(leaks.output.contains("'inout sending' parameter '$0' cannot be task-isolated at end of function"),
                "\(leaks.output)")

        let handsOver = try EffectActionRequirementTests.typecheck("""
            final class Box { var count = 0 }
            func fill(_ lock: borrowing Lock<[Box]>) {
                lock.withLock { $0.append(Box()) }
            }
            func record(_ value: Int, in lock: borrowing Lock<[Int]>) -> Int {
                lock.withLock { values in
                    values.append(value)
                    return values.count
                }
            }
            let boxes = Lock<[Box]>([Box()])
            """, sil: true, arguments: package)
        #expect(handsOver.compiled, "\(handsOver.output)")
    }

    @Test("a constant property takes its value sending: a non-Sendable value the caller goes on using does not compile",
          .enabled(if: modulesBuilt))
    func constantPropertySends() throws {
        let reused = try EffectActionRequirementTests.typecheck("""
            final class Box { var count = 0 }
            func reuse() -> Property<Box> {
                let box = Box()
                let property = Property(value: box)
                box.count = 1
                return property
            }
            """, sil: true)
        #expect(!reused.compiled)
        #expect(reused.output.contains("sending 'box' risks causing data races"), "\(reused.output)")

        let fresh = try EffectActionRequirementTests.typecheck("""
            final class Box { var count = 0 }
            let property = Property(value: Box())
            let count = 3
            let counts = Property(value: count)
            print(count, counts.value, property.value.count)
            """, sil: true)
        #expect(fresh.compiled, "\(fresh.output)")
    }

    @Test("a dispatcher's handler is @Sendable and a history's actions and states are Sendable",
          .enabled(if: modulesBuilt))
    func dispatcherAndHistoryAreChecked() throws {
        let captured = try EffectActionRequirementTests.typecheck("""
            func listen(to dispatcher: Dispatcher<String>) -> [String] {
                var log: [String] = []
                dispatcher.register { log.append($0) }
                return log
            }
            """, sil: true)
        #expect(!captured.compiled)
        #expect(captured.output.contains("mutation of captured var 'log' in concurrently-executing code"),
                "\(captured.output)")

        let unsendable = try EffectActionRequirementTests.typecheck("""
            final class Step { var size = 1 }
            struct Grow: Action {
                let step: Step
                func reduce(_ count: inout Int) { count += step.size }
            }
            let history = History<Grow>()
            """, sil: true)
        #expect(!unsendable.compiled)
        #expect(unsendable.output.contains("type 'Grow' does not conform to the 'Sendable' protocol"), "\(unsendable.output)")

        let checked = try EffectActionRequirementTests.typecheck("""
            let dispatcher = Dispatcher<String>()
            let log = MutableProperty<[String]>([])
            dispatcher.register { payload in log.modify { $0.append(payload) } }
            struct Grow: Action {
                let size: Int
                func reduce(_ count: inout Int) { count += size }
            }
            let history = History<Grow>()
            """, sil: true)
        #expect(checked.compiled, "\(checked.output)")
    }
}
