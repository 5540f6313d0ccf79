import OpenCombine
import Stillwater

/// What a subscriber saw, in order: `"v"` when it entered its observer for value v, `"/v"` when it left
/// it (so a nested delivery shows as `1 2 /2 /1`, a queued one as `1 /1 2 /2`), `"done"`, `"error(c)"`.
public typealias Log = [String]

/// The subscriber both runners use: it logs, and makes the script's reentrant send.
final class Subscriber {
    let reentry: Reentry?
    let send: (Int, Int) -> Void
    var log: Log = []
    var reentries = 0

    init(reentry: Reentry?, send: @escaping (Int, Int) -> Void) {
        self.reentry = reentry
        self.send = send
    }

    func value(_ value: Int) {
        log.append("\(value)")
        if let reentry, reentries < reentry.limit, value % reentry.modulus == 0 {
            reentries += 1
            send(reentry.input, value + reentry.offset)
        }
        log.append("/\(value)")
    }

    func completed() { log.append("done") }

    func failed(_ error: any Error) {
        log.append("error(\((error as? ScriptError)?.code ?? -1))")
    }
}

/// Runs `script` through a Stillwater chain over two publish subjects.
func runStillwater(
    _ script: Script, _ chain: (Observable<Int>, Observable<Int>) -> Observable<Int>
) -> Log {
    let inputs = [PublishSubject<Int>(), PublishSubject<Int>()]
    let subscriber = Subscriber(reentry: script.reentry) { input, value in inputs[input].send(value) }
    let subscription = chain(inputs[0].asObservable(), inputs[1].asObservable()).subscribe(
        onNext: subscriber.value, onError: subscriber.failed, onCompleted: subscriber.completed)
    for step in script.steps {
        switch step {
        case .send(let input, let value): inputs[input].send(value)
        case .complete(let input): inputs[input].complete()
        case .fail(let input, let code): inputs[input].fail(ScriptError(code: code))
        case .cancel: subscription.cancel()
        }
    }
    subscription.cancel()
    return subscriber.log
}

/// An OpenCombine input, as the chains receive it.
public typealias Input = AnyPublisher<Int, ScriptError>

/// Runs `script` through an OpenCombine chain over two passthrough subjects.
///
/// OpenCombine delivers a reentrant send at once, nested in the current delivery. With `queueReentry`,
/// a send the subscriber makes while a step's event is being delivered waits until that delivery has
/// returned, first in first out (with the sends it causes in turn); a send made while nothing is
/// delivered (during the subscribe) goes at once. That is the order Stillwater's contract promises,
/// built on OpenCombine, so that a difference explained by queueing alone can be told from any other.
func runOpenCombine(_ script: Script, _ chain: (Input, Input) -> Input, queueReentry: Bool = false) -> Log {
    let inputs = [PassthroughSubject<Int, ScriptError>(), PassthroughSubject<Int, ScriptError>()]
    var delivering = false
    var queued: [(input: Int, value: Int)] = []
    let subscriber = Subscriber(reentry: script.reentry) { input, value in
        if queueReentry && delivering { queued.append((input, value)) } else { inputs[input].send(value) }
    }
    let cancellable = chain(inputs[0].eraseToAnyPublisher(), inputs[1].eraseToAnyPublisher()).sink(
        receiveCompletion: { completion in
            switch completion {
            case .finished: subscriber.completed()
            case .failure(let error): subscriber.failed(error)
            }
        },
        receiveValue: subscriber.value
    )
    for step in script.steps {
        delivering = true
        switch step {
        case .send(let input, let value): inputs[input].send(value)
        case .complete(let input): inputs[input].send(completion: .finished)
        case .fail(let input, let code): inputs[input].send(completion: .failure(ScriptError(code: code)))
        case .cancel: cancellable.cancel()
        }
        while !queued.isEmpty {
            let (input, value) = queued.removeFirst()
            inputs[input].send(value)
        }
        delivering = false
    }
    cancellable.cancel()
    return subscriber.log
}
