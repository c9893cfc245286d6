import MonarchWire

/// What a worker has done since it started, as it reports it in answer to `status`.
public struct WorkerCounters: Sendable, Equatable {
    /// Requests received.
    public var requests = 0
    /// Requests answered with a response.
    public var responses = 0
    /// Requests answered with a miss.
    public var misses = 0
    /// Requests answered with a failure (cancelled ones included).
    public var failures = 0
    /// Requests the coordinator cancelled.
    public var cancels = 0
    /// Requests being served now.
    public var inFlight = 0
    /// Answers (responses, misses, failures, or `result`s of `store`, `invalidate` and
    /// `status`) too large for the coordinator's frame limit, sent instead as a
    /// `responseTooLarge` failure; a request's is also counted in ``failures``.
    public var tooLarge = 0
    /// Answers that could not be sent at all (the connection had ended, or not even the
    /// `responseTooLarge` failure fitted in a frame); each was logged at error level.
    public var unsent = 0

    /// The counters as a `result` message's data.
    public var resultData: [String: JSONValue] {
        [
            "requests": .integer(Int64(requests)), "responses": .integer(Int64(responses)),
            "misses": .integer(Int64(misses)), "failures": .integer(Int64(failures)),
            "cancels": .integer(Int64(cancels)), "inFlight": .number(Double(inFlight)),
            "tooLarge": .integer(Int64(tooLarge)), "unsent": .integer(Int64(unsent)),
        ]
    }

    /// Counts an answer about to be sent.
    mutating func count(_ answer: WireMessage) {
        inFlight -= 1
        tally(answer, by: 1)
    }

    /// Counts `replacement` in place of `answer`, counted before and replaced when it did not
    /// fit: the request is still answered once.
    mutating func recount(_ answer: WireMessage, as replacement: WireMessage) {
        tally(answer, by: -1)
        tally(replacement, by: 1)
    }

    private mutating func tally(_ answer: WireMessage, by step: Int) {
        switch answer {
        case .response: responses += step
        case .miss: misses += step
        default: failures += step
        }
    }
}
