import Foundation
import StillwaterLive
import StillwaterTesting
import Testing

@Suite("LiveClientFrame")
struct ClientFrameTests {
    func decode(_ text: String, maxBytes: Int = 1_000) -> Result<LiveClientFrame<BoardCommand>, LiveFrameError> {
        Result { () throws(LiveFrameError) in try LiveClientFrame<BoardCommand>.decode(text, maxBytes: maxBytes) }
    }

    func error(_ text: String, maxBytes: Int = 1_000) -> LiveFrameError? {
        guard case .failure(let error) = decode(text, maxBytes: maxBytes) else { return nil }
        return error
    }

    @Test("a hello decodes with its token, params and resume point")
    func hello() throws {
        let text = #"{"type":"hello","protocol":1,"token":"t","params":{"team":"a"},"resume":{"stream":"s-1","version":7},"ref":3}"#
        guard case .success(.hello(let hello)) = decode(text) else { Issue.record("not a hello"); return }
        #expect(hello == LiveHello(protocolVersion: 1, token: "t", params: ["team": "a"],
                                   resume: LiveResume(stream: "s-1", version: 7), ref: 3))
    }

    @Test("a command decodes with its ref and cid")
    func command() throws {
        guard case .success(.command(let request)) = decode(commandFrame(.toggle(id: "i1"), ref: 9, cid: "c-1_x")) else {
            Issue.record("not a command")
            return
        }
        #expect(request.command == .toggle(id: "i1"))
        #expect(request.ref == 9)
        #expect(request.cid == "c-1_x")
    }

    @Test("malformed frames get a code, a message, and their ref when it can be read", arguments: [
        (#"not json"#, LiveErrorCode.malformed, nil as Int?),
        (#"[1,2]"#, .malformed, nil),
        (#"{"ref":4}"#, .malformed, 4),
        (#"{"type":"launch","ref":5}"#, .unknownType, 5),
        (#"{"type":"command","ref":6,"comand":{}}"#, .malformed, 6),
        (#"{"type":"command","ref":7}"#, .malformed, 7),
        (#"{"type":"command","ref":8,"command":{"explode":{}}}"#, .badCommand, 8),
        (#"{"type":"command","ref":9,"cid":"has space","command":{"toggle":{"id":"i1"}}}"#, .malformed, 9),
        (#"{"type":"command","ref":"ten","command":{"toggle":{"id":"i1"}}}"#, .malformed, nil),
        (#"{"type":"hello","ref":11}"#, .malformed, 11),
        (#"{"type":"hello","protocol":"one","ref":12}"#, .malformed, 12),
    ])
    func malformed(text: String, code: LiveErrorCode, ref: Int?) {
        let error = error(text)
        #expect(error?.code == code)
        #expect(error?.ref == ref)
        #expect(error?.message.isEmpty == false)
    }

    @Test("a frame over the limit is refused, with its ref")
    func tooLarge() {
        let text = commandFrame(.add(text: String(repeating: "x", count: 2_000)), ref: 13)
        let error = error(text, maxBytes: 1_000)
        #expect(error?.code == .tooLarge)
        #expect(error?.ref == 13)
    }

    @Test("deeply nested and random input is refused, never a trap")
    func hostileInput() {
        let nested = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(error(nested, maxBytes: 1_000_000)?.code == .malformed)
        let nestedCommand = #"{"type":"command","ref":1,"command":"# + String(repeating: "{\"a\":", count: 10_000) + "1"
            + String(repeating: "}", count: 10_000) + "}"
        #expect(error(nestedCommand, maxBytes: 1_000_000) != nil)
        var random = SeededRandom(seed: 38)
        let alphabet = Array(#"{}[]":,0123456789truefalsnl \typecommandhelloref"#)
        for _ in 0..<2_000 {
            let length = Int.random(in: 0..<60, using: &random)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            if case .success(let frame) = decode(text) {
                // Only a well-formed hello, command, reauth or ping may decode.
                switch frame {
                case .hello, .command, .reauth, .ping: break
                }
            }
        }
    }
}
