#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The dependencies a store lends to the code it runs: its reduces (and the reduces of the child features
/// those make) and its effects' tasks, so that a child feature reads its store's dependencies with no
/// parameter passed down by hand.
///
/// Two carriers, one per kind of code:
/// - a reduce runs synchronously on the store's deliverer, so the store marks this thread for its length
///   (``enter(_:)``): one thread-specific slot, set before the reduce and restored after it. (A task-local
///   would do the same, but binding one outside a task allocates: about 900 instructions per reduce
///   against about 90 for the slot, on a workload whose whole round trip is 2 200.)
/// - an effect's task is bound with the task-local ``task`` for its whole life, so what it calls reads
///   the dependencies too, on whatever thread it resumes.
///
/// A store made without dependencies (every key at its default) marks nothing: a reduce that finds no
/// mark reads the defaults, which are that store's dependencies.
@usableFromInline
final class DependencyContext: Sendable {
    let dependencies: Dependencies

    init(_ dependencies: Dependencies) {
        self.dependencies = dependencies
    }

    /// The dependencies in force here: the innermost ``enter(_:)`` on this thread, else the effect task's,
    /// else every key's default.
    static var current: Dependencies {
        if let mark = pthread_getspecific(slot) {
            // The mark is set only inside `enter`, which keeps the context alive until it restores the slot.
            return Unmanaged<DependencyContext>.fromOpaque(mark).takeUnretainedValue().dependencies
        }
        return task?.dependencies ?? Dependencies()
    }

    /// Runs `body` with this context as the thread's current one, then restores the one before.
    @usableFromInline
    func enter<Result>(_ body: () throws -> Result) rethrows -> Result {
        let previous = pthread_getspecific(Self.slot)
        return try withExtendedLifetime(self) {
            pthread_setspecific(Self.slot, Unmanaged.passUnretained(self).toOpaque())
            defer { pthread_setspecific(Self.slot, previous) }
            return try body()
        }
    }

    /// The context of the effect task this code runs in (set by ``Effect/run(priority:_:catch:)``).
    @TaskLocal static var task: DependencyContext?

    /// The thread-specific slot of ``enter(_:)``; it holds an unretained context, or `nil`.
    static let slot: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "Stillwater: no thread-specific key is left for the dependencies of reduces (pthread_key_create failed with \(status))")
        return key
    }()
}

extension Dependencies {
    /// The dependencies of the store whose reduce runs on this thread (and of the child feature being
    /// reduced, with its overrides), or of the effect whose task this is; every key's default elsewhere.
    static var current: Dependencies { DependencyContext.current }
}
