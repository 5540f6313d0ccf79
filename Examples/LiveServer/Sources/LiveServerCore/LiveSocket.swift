import HummingbirdWebSocket
import NIOWebSocket
import StillwaterLive

/// Serves one WebSocket with a `LiveConnection`: each text frame the client sends goes to the connection
/// (a binary one is answered with an error frame), and what the connection has to write is written in
/// order, each write awaited before the next is asked for, until it closes the socket with its close
/// code (4401, 4408, 4400, 4429, 1001) or the client closes it. Returns once both directions ended; the
/// connection is told the transport closed either way.
///
/// A frame over `maxSize` bytes ends the read (the WebSocket layer closes the socket with 1009); frames
/// within it but over the hub's `LiveLimits.maxFrameBytes` are refused by the connection with an error
/// frame and change nothing.
public func serveLive<Service: LiveService>(
    _ connection: LiveConnection<Service>, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
    maxSize: Int
) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            while let write = await connection.nextWrite() {
                switch write {
                case .frames(let frames):
                    for frame in frames { try await outbound.write(.text(frame)) }
                case .close(let code, let reason):
                    try await outbound.close(WebSocketErrorCode(codeNumber: code.rawValue), reason: reason)
                    return
                }
            }
        }
        do {
            for try await message in inbound.messages(maxSize: maxSize) {
                switch message {
                case .text(let text): connection.receive(text)
                case .binary: connection.receiveBinary()
                }
            }
        } catch {
            connection.transportClosed()
            throw error
        }
        connection.transportClosed()
        try await group.waitForAll()
    }
}
