/// One encoded text frame of the live protocol: its UTF-8 bytes, in storage that every copy shares.
///
/// A hub encodes each patch and snapshot once per version and audience, and every client of that
/// audience is handed the same `LiveFrame`: copying one copies a reference, never the bytes. A frame
/// never changes once made.
///
/// An adapter writes a frame's bytes (``withUTF8(_:)``) or its ``text``; when its transport wants the
/// bytes in a buffer type of its own, ``transportBuffer(_:)`` makes that buffer once per frame, on the
/// first write, and hands every later write of the same frame the same buffer.
///
/// ```swift
/// import StillwaterLive
///
/// let frame = LiveFrame(#"{"type":"pong"}"#)
/// let copy = frame
/// print(frame.count, copy.sharesStorage(with: frame), frame.text)
/// // Prints "15 true {\"type\":\"pong\"}"
/// ```
///
/// - Complexity: Making a frame from a `String` is O(1) for a native Swift string (the frame keeps the
///   string's own UTF-8 storage) and one allocation; copies are O(1).
public struct LiveFrame: Sendable, Equatable, CustomStringConvertible {
    private let storage: LiveFrameStorage

    /// A frame holding `text`'s UTF-8 bytes.
    ///
    /// - Parameter text: One whole frame of the live protocol (JSON text).
    public init(_ text: String) {
        var text = text
        // A bridged or otherwise foreign string is made native once here, so that every write of the
        // frame reads contiguous UTF-8 without converting.
        text.makeContiguousUTF8()
        storage = LiveFrameStorage(text: text)
    }

    /// The frame as a `String` (no copy: the frame's bytes are the string's storage).
    public var text: String { storage.text }

    /// The number of UTF-8 bytes in the frame (the WebSocket payload's length).
    public var count: Int { storage.text.utf8.count }

    /// The frame's text.
    public var description: String { storage.text }

    /// Calls `body` with the frame's UTF-8 bytes, without copying them.
    ///
    /// The pointer is valid only while `body` runs: copy the bytes to keep them.
    public func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        // Made contiguous at init, so this reads the string's storage in place.
        var text = storage.text
        return try text.withUTF8(body)
    }

    /// Whether `other` is a copy of this frame (the same storage, not only the same bytes): a hub hands
    /// every client of one audience at one version the same frame.
    public func sharesStorage(with other: LiveFrame) -> Bool {
        storage === other.storage
    }

    /// The transport's own buffer of this frame's bytes: `make` builds it the first time any copy of the
    /// frame asks, and the buffer is kept with the frame, so every later call (from any connection, any
    /// thread) returns the same buffer without calling `make`.
    ///
    /// Meant for an adapter whose transport writes buffers of its own type (a NIO `ByteBuffer`, say): a
    /// patch sent to a thousand clients is copied into such a buffer once, not once per client. Use one
    /// buffer type per frame: a call with another type than the kept one calls `make` and keeps nothing.
    ///
    /// - Parameter make: Builds the buffer from the frame; it runs at most once per frame and buffer type
    ///   (under the frame's lock, so two connections that write the frame at once build one buffer).
    /// - Complexity: O(1) after the first call, which costs what `make` costs.
    public func transportBuffer<Buffer: Sendable>(_ make: (LiveFrame) -> Buffer) -> Buffer {
        storage.buffer.withLock { kept -> Buffer in
            if let kept = kept as? Buffer { return kept }
            let made = make(self)
            if kept == nil { kept = made }
            return made
        }
    }

    /// Whether the two frames hold the same bytes.
    public static func == (lhs: LiveFrame, rhs: LiveFrame) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.text == rhs.storage.text
    }
}

/// A frame's bytes and its transport buffer: one allocation per frame, shared by every copy.
private final class LiveFrameStorage: Sendable {
    let text: String
    /// The transport's buffer of ``text``, made on the first write (``LiveFrame/transportBuffer(_:)``).
    let buffer = LiveLock<(any Sendable)?>(nil)

    init(text: String) {
        self.text = text
    }
}

/// What a connection has to write next: every frame waiting for it, in order, to go out in one write;
/// or the close.
public enum LiveWrite: Sendable, Equatable {
    /// Text frames, in order: write them all, then flush once.
    case frames([LiveFrame])
    /// Close the connection with this code and reason; nothing follows.
    case close(LiveCloseCode, reason: String)
}
