import Foundation
import Hummingbird
import LiveServerCore

// live-server [--port N] [--host H] [--stats] [--patch-interval-ms N]: serves the seeded boards (team tokens `alpha`, `beta`).
// The port also comes from the environment (PORT); the default is 8080.
var port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "") ?? 8080
var host = "127.0.0.1"
var exposesStats = false
var patchInterval = Duration.zero
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--port": port = arguments.popFirst().flatMap { Int($0) } ?? port
    case "--host": host = arguments.popFirst() ?? host
    case "--stats": exposesStats = true
    case "--patch-interval-ms": patchInterval = .milliseconds(arguments.popFirst().flatMap { Int($0) } ?? 0)
    default:
        if let number = Int(argument) {
            port = number
        } else {
            print("usage: live-server [--port N | N] [--host H] [--stats] [--patch-interval-ms N]")
            exit(2)
        }
    }
}
let server = LiveServer.seeded(exposesStats: exposesStats, patchInterval: patchInterval)
let listeningHost = host
let app = server.application(host: host, port: port) { port in
    // Unbuffered, so a script waiting for this line sees it at once.
    FileHandle.standardOutput.write(Data("live-server: http://\(listeningHost):\(port)/?team=alpha (teams: alpha, beta)\n".utf8))
}
try await app.runService()
