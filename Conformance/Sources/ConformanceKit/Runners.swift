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

/// When a reentrant send made from the subscriber's observer is sent on, in `runOpenCombine`.
enum ReentryQueue {
    /// At once, nested in the current delivery: OpenCombine's own behaviour.
    case nested
    /// When the script step's delivery has returned (every observer of the input has had the event).
    case afterStep
    /// When the subscriber's observer has returned, even if the step is still being delivered
    /// elsewhere (to a second subscriber of the same input, say).
    case afterObserver
}

/// Runs `script` through an OpenCombine chain over two inputs.
///
/// OpenCombine delivers a reentrant send at once, nested in the current delivery. Queued
/// (`queueReentry: true`, or `.afterStep`), a send the subscriber makes while a step's event is being
/// delivered waits until that delivery has returned, first in first out (with the sends it causes in
/// turn); a send made while nothing is delivered (during the subscribe) goes at once. That is the order
/// Stillwater's contract promises, built on OpenCombine, so that a difference explained by queueing alone
/// can be told from any other. `.afterObserver` queues it only until the subscriber's observer returns:
/// where one input's event fans out to several inner streams (`flatMap`), Stillwater's operator, whose
/// own queue is what the send waits in, runs it as soon as its current delivery returns, before the
/// input's other subscribers have had the event.
func runOpenCombine(_ script: Script, _ chain: (Input, Input) -> Input, queueReentry: Bool = false) -> Log {
    runOpenCombine(script, chain, queue: queueReentry ? .afterStep : .nested)
}

func runOpenCombine(_ script: Script, _ chain: (Input, Input) -> Input, queue: ReentryQueue) -> Log {
    let inputs = [OrderedSubject(), OrderedSubject()]
    var delivering = false
    var queued: [(input: Int, value: Int)] = []
    var observing = 0
    var draining = false
    let subscriber = Subscriber(reentry: script.reentry) { input, value in
        switch queue {
        case .nested: inputs[input].send(value)
        case .afterStep where delivering, .afterObserver where observing > 0: queued.append((input, value))
        case .afterStep, .afterObserver: inputs[input].send(value)
        }
    }
    let cancellable = chain(inputs[0].eraseToAnyPublisher(), inputs[1].eraseToAnyPublisher()).sink(
        receiveCompletion: { completion in
            switch completion {
            case .finished: subscriber.completed()
            case .failure(let error): subscriber.failed(error)
            }
        },
        receiveValue: { value in
            observing += 1
            subscriber.value(value)
            observing -= 1
            guard queue == .afterObserver, observing == 0, !draining else { return }
            draining = true
            while !queued.isEmpty {
                let (input, value) = queued.removeFirst()
                inputs[input].send(value)
            }
            draining = false
        }
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

/// The OpenCombine runner's input: `PassthroughSubject`'s behaviour (a value goes to each subscriber with
/// demand and is dropped for one without; after the completion, a new subscriber gets it at once; a send
/// from inside a delivery is delivered nested), except that its subscribers get each event in the order
/// they subscribed. OpenCombine 0.14's `PassthroughSubject` keeps two or more subscribers in a `Set`, so
/// which one gets a value first depends on their addresses' hashes: a `flatMap` with two inner streams
/// subscribed to one input would then order their values at random, a property of the subject and not of
/// the operator under check. (Stillwater's `PublishSubject`, like RxSwift's, sends in subscription order;
/// Combine leaves the order unspecified.)
final class OrderedSubject: OpenCombine.Publisher {
    typealias Output = Int
    typealias Failure = ScriptError

    private var conduits: [Conduit] = []
    private var completion: Subscribers.Completion<ScriptError>?

    func receive<S: OpenCombine.Subscriber>(subscriber: S) where S.Input == Int, S.Failure == ScriptError {
        if let completion {
            subscriber.receive(subscription: Subscriptions.empty)
            subscriber.receive(completion: completion)
            return
        }
        let conduit = Conduit(AnySubscriber(subscriber), subject: self)
        conduits.append(conduit)
        subscriber.receive(subscription: conduit)
    }

    func send(_ value: Int) {
        guard completion == nil else { return }
        for conduit in conduits { conduit.send(value) }  // a copy: a subscriber added meanwhile waits
    }

    func send(completion: Subscribers.Completion<ScriptError>) {
        guard self.completion == nil else { return }
        self.completion = completion
        let ending = conduits
        conduits = []
        for conduit in ending { conduit.finish(completion) }
    }

    fileprivate func remove(_ conduit: Conduit) {
        conduits.removeAll { $0 === conduit }
    }

    final class Conduit: OpenCombine.Subscription {
        private var downstream: AnySubscriber<Int, ScriptError>?
        private var demand = Subscribers.Demand.none
        private weak var subject: OrderedSubject?

        init(_ downstream: AnySubscriber<Int, ScriptError>, subject: OrderedSubject) {
            self.downstream = downstream
            self.subject = subject
        }

        func request(_ demand: Subscribers.Demand) { self.demand += demand }

        func cancel() {
            downstream = nil
            subject?.remove(self)
        }

        func send(_ value: Int) {
            guard let downstream, demand > 0 else { return }
            demand -= 1
            demand += downstream.receive(value)
        }

        func finish(_ completion: Subscribers.Completion<ScriptError>) {
            guard let downstream else { return }
            self.downstream = nil
            downstream.receive(completion: completion)
        }
    }
}
