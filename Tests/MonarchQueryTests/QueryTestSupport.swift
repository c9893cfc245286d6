#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Monarch
import MonarchWire
import Synchronization
@_exported import TestWaiting

/// Holds whoever passes while closed, until opened.
final class AnswerGate: Sendable {
    private let waiting = Mutex<[CheckedContinuation<Void, Never>]?>(nil)

    /// Holds whoever passes from now until ``open()``.
    func close() { waiting.withLock { $0 = $0 ?? [] } }

    /// Lets everyone held go, and whoever comes later pass.
    func open() {
        let held = waiting.withLock { waiting in
            defer { waiting = nil }
            return waiting ?? []
        }
        for continuation in held { continuation.resume() }
    }

    /// How many are held now.
    var held: Int { waiting.withLock { $0?.count ?? 0 } }

    /// Returns at once when open, else once opened.
    func pass() async {
        await withCheckedContinuation { continuation in
            let through = waiting.withLock { waiting -> Bool in
                guard waiting != nil else { return true }
                waiting!.append(continuation)
                return false
            }
            if through { continuation.resume() }
        }
    }
}

/// An in-process resource for the query tests: `GET counter` answers the current count (as
/// JSON), `POST counter` adds one; `GET items?page=N` or `?offset=O&limit=L` answers a slice
/// of 0..<total; every call is counted, and a gate may hold answers back.
final class CounterProvider: RequestProvider, Sendable {
    var name: String { "counter" }
    let total: Int
    private let state = Mutex((count: 0, calls: [String: Int](), failing: false))
    private let gate = AnswerGate()
    /// Holds `GET counter` answers after the count is read (an answer on its way while the
    /// count changes).
    private let readGate = AnswerGate()

    init(total: Int = 7) { self.total = total }

    var count: Int { state.withLock { $0.count } }
    func calls(_ key: String) -> Int { state.withLock { $0.calls[key] ?? 0 } }
    func setFailing(_ failing: Bool) { state.withLock { $0.failing = failing } }

    /// Holds each `GET counter` answer, with the count it read, until ``releaseReads()``.
    func holdReads() { readGate.close() }
    func releaseReads() { readGate.open() }
    /// `GET counter` answers held now.
    var heldReads: Int { readGate.held }

    /// Answers held back by the gate now.
    var held: Int { gate.held }

    /// Holds every answer until ``open()``.
    func close() { gate.close() }
    func open() { gate.open() }

    func perform(_ request: Request) async -> ProviderOutcome {
        await gate.pass()
        let key = "\(request.method) \(request.path)"
        let (count, failing) = state.withLock { state in
            state.calls[key, default: 0] += 1
            if request.method == "POST" && request.path == "counter" { state.count += 1 }
            return (state.count, state.failing)
        }
        if request.method == "GET" && request.path == "counter" { await readGate.pass() }
        if failing { return .failure(ProviderFailure(code: "broken", message: "failing on purpose")) }
        switch request.path {
        case "counter": return .response(Response(body: Data("{\"value\":\(count)}".utf8)))
        case "items":
            func number(_ name: String) -> Int? { request.query.first { $0.name == name }?.value.flatMap { Int($0) } }
            let slice: [Int]
            if let page = number("page") {
                let start = (page - 1) * 3
                slice = Array((0..<total).dropFirst(start).prefix(3))
            } else {
                slice = Array((0..<total).dropFirst(number("offset") ?? 0).prefix(number("limit") ?? total))
            }
            return .response(Response(body: try! JSONEncoder().encode(slice)))
        default: return .miss(reason: "no \(request.path)")
        }
    }
}

struct Counter: Codable, Sendable, Equatable { var value: Int }

struct CounterRequest: MonarchRequest {
    typealias Response = Counter
    var path: String { "counter" }
    var previewData: Counter { Counter(value: -1) }
}

struct IncrementRequest: MonarchRequest {
    typealias Response = Counter
    var path: String { "counter" }
    var method: String { "POST" }
    var body: RequestBody? { .json(["by": 1]) }
    var previewData: Counter { Counter(value: -1) }
}

struct ItemsRequest: MonarchRequest {
    typealias Response = [Int]
    var query: [QueryItem]
    var path: String { "items" }
    var previewData: [Int] { [] }
}

/// A Monarch whose one provider is `provider`.
func monarch(_ provider: CounterProvider) -> Monarch {
    var monarch = Monarch()
    monarch.register(provider)
    return monarch
}

/// The first `count` states of `stream`.
func first<S: Sendable>(_ count: Int, of stream: AsyncStream<S>) async -> [S] {
    var states: [S] = []
    for await state in stream {
        states.append(state)
        if states.count == count { break }
    }
    return states
}
