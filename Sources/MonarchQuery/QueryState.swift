import Monarch

/// Where a query stands. The last value is kept while a query refetches and after a refetch
/// fails, so a screen or a report can keep showing it.
public enum QueryState<Value: Sendable>: Sendable {
    /// Nothing asked yet (a query started on demand).
    case idle
    /// A request is in flight; `previous` is the last value, if any.
    case loading(previous: Value?)
    /// The last request answered `value`.
    case success(Value)
    /// The last request failed; `previous` is the last value, if any.
    case failure(MonarchError, previous: Value?)

    /// The latest value: the success's, or the one kept while loading or after a failure.
    public var value: Value? {
        switch self {
        case .idle: nil
        case .loading(let previous), .failure(_, let previous): previous
        case .success(let value): value
        }
    }

    /// Whether a request is in flight.
    public var isLoading: Bool {
        if case .loading = self { true } else { false }
    }

    /// The error of a failed state.
    public var error: MonarchError? {
        if case .failure(let error, _) = self { error } else { nil }
    }
}

extension QueryState: Equatable where Value: Equatable {}
