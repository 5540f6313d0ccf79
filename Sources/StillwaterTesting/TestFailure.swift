#if canImport(Testing)
import Testing
#endif
#if canImport(XCTest)
import XCTest
#endif

/// Reports a test failure to whichever test framework is running the caller: Swift Testing's
/// `Issue.record` inside a Swift Testing test, `XCTFail` otherwise.
///
/// `TestStore` reports every failure through here, so its assertions work in both kinds of test. Outside
/// a Swift Testing test the message is also printed to standard output (`file:line: failure: message`),
/// because XCTest drops a failure when none of its tests is running: a plain program, or a test store
/// released off its test.
///
/// - Parameters:
///   - message: What went wrong, shown as the failure's text.
///   - fileID: The file ID of the place a failure is reported; the caller's unless given.
///   - filePath: The path of that file.
///   - line: The line of that place.
///   - column: The column of that place.
public func reportTestFailure(
    _ message: String,
    fileID: StaticString = #fileID, filePath: StaticString = #filePath,
    line: UInt = #line, column: UInt = #column
) {
    #if canImport(Testing)
    if Test.current != nil {
        Issue.record(
            Comment(rawValue: message),
            sourceLocation: SourceLocation(
                fileID: String(describing: fileID), filePath: String(describing: filePath),
                line: Int(line), column: Int(column)))
        return
    }
    #endif
    // XCTFail discards a message when no XCTest test is running (a plain program, or a TestStore
    // released off its test), so the message is also written out: it is never lost.
    print("\(fileID):\(line): failure: \(message)")
    #if canImport(XCTest)
    XCTFail(message, file: filePath, line: line)
    #endif
}
