import Stillwater
import Synchronization

/// Records every event a stream sends, for assertions in tests.
///
/// ```swift
/// let subject = PublishSubject<Int>()
/// let recorder = Recorder(subject)
/// subject.send(1)
/// subject.complete()
/// print(recorder.values, recorder.isCompleted)
/// // Prints "[1] true"
/// ```
///
/// A recorder stays subscribed until ``cancel()`` or until it is released. It is safe to read from any
/// thread while events arrive.
public final class Recorder<Value>: @unchecked Sendable {
    private let storage = Storage()
    private var subscription: Subscription?

    /// Subscribes to `source` and starts recording.
    public init(_ source: some ObservableType<Value>) {
        subscription = nil
        subscription = source.subscribe { [storage] event in
            storage.append(event)
        }
    }

    /// Every event recorded so far, in order.
    public var events: [Event<Value>] {
        storage.events
    }

    /// The values of the `next` events recorded so far, in order.
    public var values: [Value] {
        events.compactMap(\.value)
    }

    /// Whether a `completed` event was recorded.
    public var isCompleted: Bool {
        events.contains { if case .completed = $0 { return true } else { return false } }
    }

    /// The error of a recorded `error` event, if any.
    public var error: (any Error)? {
        events.lazy.compactMap(\.error).first
    }

    /// Stops recording.
    public func cancel() {
        subscription?.cancel()
    }
}

extension Recorder {
    private final class Storage: @unchecked Sendable {
        private let recorded = Mutex<UncheckedBox<[Event<Value>]>>(UncheckedBox([]))

        func append(_ event: Event<Value>) {
            let box = UncheckedBox(event)
            recorded.withLock { $0.value.append(box.value) }
        }

        var events: [Event<Value>] {
            recorded.withLock { UncheckedBox($0.value) }.value
        }
    }
}

private struct UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
