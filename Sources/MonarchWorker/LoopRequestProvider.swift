import Monarch
import MonarchLoop

/// A provider that answers requests on an event loop through callbacks, with no task per
/// request: ``WorkerRuntime`` starts each request with ``start(_:answer:)`` on the provider's
/// loop and sends the answer from the callback, where a ``RequestProvider`` costs a task (its
/// creation, its jobs and its end) for every request.
///
/// ``RequestProvider/perform(_:)`` still answers the same requests the same way (a provider
/// usually builds it on ``start(_:answer:)``).
public protocol LoopRequestProvider: RequestProvider {
    /// The loop whose thread runs ``start(_:answer:)``, the answers and the cancels.
    var loop: EventLoop { get }

    /// Starts answering `request`. Loop thread only.
    ///
    /// `answer` is called exactly once, on the loop thread: later, or at once (inside this
    /// call) when the answer needs no waiting. The run returned may be cancelled at any time
    /// after this returns; the request is then answered promptly (usually with a `cancelled`
    /// failure), unless it was answered already.
    func start(_ request: Request, answer: @escaping (ProviderOutcome) -> Void) -> any ProviderRun
}

/// A request a ``LoopRequestProvider`` is answering.
public protocol ProviderRun: AnyObject, Sendable {
    /// Ends the run promptly; its answer (usually a `cancelled` failure) still comes, unless it
    /// came already (then this does nothing). Loop thread of the provider only.
    func cancel()
}
