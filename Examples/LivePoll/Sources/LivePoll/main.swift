// live-poll: a poll served live to browsers and programs, on StillwaterLive and its Hummingbird adapter.
//
//   live-poll --data DIR [--port N] [--host H] [--question Q --option A --option B …]
//
// The secret is read from the environment (POLL_TOKEN, at least 16 characters); every client must present
// it. A new data folder needs --question and two or more --option; an existing one keeps its poll.
// Exit status: 0 after a clean shutdown (SIGTERM or SIGINT), 1 when the data folder cannot be opened
// (damaged, in use), 2 for a wrong command line or environment (nothing is created then).
import Foundation
import Hummingbird
import PollCore
import ServiceLifecycle
import Stillwater
import StillwaterHummingbird
import StillwaterLive

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("live-poll: \(message)\n".utf8))
    exit(status)
}

/// The command line, read once.
struct Options {
    var port = 8080, host = "127.0.0.1", data: String?, question: String?, options: [String] = []

    init(_ arguments: some Sequence<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard let value = iterator.next() else { fail("\(argument) needs a value") }
            switch argument {
            case "--port":
                guard let number = Int(value), (0...65_535).contains(number) else { fail("--port must be 0 to 65535, not \(value)") }
                port = number
            case "--host": host = value
            case "--data": data = value
            case "--question": question = value
            case "--option": options.append(value)
            default: fail("unknown option \(argument) (usage: live-poll --data DIR [--port N] [--host H] [--question Q --option A --option B …])")
            }
        }
    }
}

let arguments = Options(CommandLine.arguments.dropFirst())
let (port, host, question, options) = (arguments.port, arguments.host, arguments.question, arguments.options)
guard let data = arguments.data else { fail("--data DIR is required (the poll's journal)") }
guard let secret = ProcessInfo.processInfo.environment["POLL_TOKEN"], secret.count >= 16 else {
    fail("set POLL_TOKEN to the poll's secret, at least 16 characters")
}
if question != nil, options.count < 2 { fail("a new poll needs at least two --option") }
if question == nil, ((try? FileManager.default.contentsOfDirectory(atPath: data)) ?? []).isEmpty {
    fail("\(data) holds no poll yet: give --question and at least two --option")
}

let tokens = LiveTokens([secret])
let journal: FileJournal<LiveLogState<Poll>, LiveEntry<Vote>>
let hub: LiveHub<PollService>
do {
    try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
    journal = try FileJournal(directory: data)
    hub = try await LiveHub.open(
        PollService(check: tokens.accepts), log: journal,
        initial: Poll(question: question ?? "", options: options),
        warn: { FileHandle.standardError.write(Data("live-poll: \($0)\n".utf8)) })
} catch {
    fail("cannot open \(data): \(error)", status: 1)
}

let live = LiveEndpoint(path: "/live", hub: hub)
let router = Router()
live.addRoutes(to: router)
guard let pageURL = Bundle.module.url(forResource: "index", withExtension: "html"), let page = try? Data(contentsOf: pageURL) else {
    fail("the page (index.html) is missing beside the program", status: 1)
}
router.get("/") { _, _ in
    Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
             body: .init(byteBuffer: ByteBuffer(bytes: page)))
}
let app = Application(
    router: router, server: live.server, configuration: .init(address: .hostname(host, port: port)),
    onServerRunning: { print("live-poll: listening on \(host):\($0.localAddress?.port ?? port)") })
try await ServiceGroup(
    configuration: .init(services: [app, live], gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger)
).run()
