// `todo-fuzz`: feeds bytes to the todo file reader and stops on any broken promise.
//
// Fuzzing (libFuzzer drives it, with AddressSanitizer; `TODO_FUZZ=1` makes the manifest build the reader
// and this target with `-sanitize=fuzzer,address`):
//   TODO_FUZZ=1 swift build --product todo-fuzz --scratch-path .build-fuzz
//   .build-fuzz/debug/todo-fuzz -max_total_time=600 .build-fuzz/corpus Tests/TodoTests/FuzzCorpus
// Built normally (as `swift build` does), it replays the files or folders given as arguments once each,
// so the corpus is checked without the fuzzer: `swift run todo-fuzz Tests/TodoTests/FuzzCorpus`.

import Foundation
import TodoCore

/// Checks one input, stopping the program with the broken promise if there is one.
func check(_ data: Data) {
    if let broken = TodoFormat.brokenPromise(in: data) {
        fatalError("todo-fuzz: \(broken); input: \(data.base64EncodedString())")
    }
}

#if FUZZING
/// The C `argv` a program's entry point receives.
public typealias Arguments = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?

/// libFuzzer's driver, for a program with a `main` of its own.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzer(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<Arguments>,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// libFuzzer calls this with every input it makes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    check(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}

/// The entry point SwiftPM links an executable's `main` to (`<module>_main`): it runs libFuzzer's driver.
/// (Which `main` the linker keeps, this one or libFuzzer's own, makes no difference: both run the driver
/// over ``fuzzOneInput(_:_:)``.)
@_cdecl("TodoFuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: Arguments) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzer(&argc, &argv, fuzzOneInput)
}
#else
/// Replays files and folders of inputs, once each.
@main
enum Replay {
    static func main() {
        var checked = 0
        for argument in CommandLine.arguments.dropFirst() {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("todo-fuzz: no file or folder at \(argument)\n".utf8))
                exit(2)
            }
            let paths = isFolder.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []).sorted()
                    .map { (argument as NSString).appendingPathComponent($0) }
                : [argument]
            for path in paths {
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                check(data)
                checked += 1
            }
        }
        print("todo-fuzz: \(checked) inputs checked, every promise kept")
    }
}
#endif
