#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Histogram

/// What a load run measured; its JSON form is what `monarch bench --json` prints.
public struct BenchReport: Codable, Sendable, Equatable {
    /// Latency percentiles of the answered requests, in microseconds (HdrHistogram, three
    /// significant digits).
    public struct Latency: Codable, Sendable, Equatable {
        /// The fastest answer.
        public var min: UInt64
        /// The median.
        public var p50: UInt64
        /// The 90th percentile.
        public var p90: UInt64
        /// The 99th percentile.
        public var p99: UInt64
        /// The 99.9th percentile.
        public var p999: UInt64
        /// The slowest answer.
        public var max: UInt64
        /// The mean, to a tenth of a microsecond.
        public var mean: Double
    }

    /// The coordinator's address.
    public var address: String
    /// The paths asked for, in words.
    public var paths: String
    /// The cache policy sent, if any.
    public var policy: String?
    /// Whether every request carried a query of its own.
    public var distinctQueries: Bool
    /// Connections asked for.
    public var connections: Int
    /// Connections the coordinator welcomed.
    public var connected: Int
    /// Requests kept in flight per connection.
    public var inFlight: Int
    /// Event loops (threads) driving the connections.
    public var loops: Int
    /// The warm-up, not measured, in seconds.
    public var warmupSeconds: Double
    /// The measured time in seconds.
    public var seconds: Double
    /// Responses counted in the measured time (any status; bodies of the checked length).
    public var answered: Int
    /// Answered requests per second.
    public var rps: Double
    /// Body bytes answered per second.
    public var bodyBytesPerSecond: Double
    /// Latency of the answered requests, from sending the request to reading its answer.
    public var latencyUs: Latency
    /// Requests that did not get a response, by code: chain failure codes (`overloaded`,
    /// `exhausted`, `deadlineExceeded`, …), `bodyMismatch` (wrong body length),
    /// `connectionLost` (its connection ended), `cannotConnect` (connections never welcomed).
    public var errors: [String: Int]
    /// The sum of ``errors``.
    public var errorCount: Int
    /// Responses by status.
    public var statuses: [String: Int]
    /// Responses by the provider that answered (`cache`, `bundle`, `network`).
    public var sources: [String: Int]
    /// Requests still unanswered when the run stopped waiting for them (not counted above).
    public var unfinished: Int

    init(plan: BenchPlan, loops: Int, seconds: Double, result: ShardResult) {
        address = "\(plan.address)"
        paths = plan.pathsDescription
        policy = plan.policy?.rawValue
        distinctQueries = plan.distinctQueries
        connections = plan.connections
        connected = result.connected
        inFlight = plan.inFlight
        self.loops = loops
        if case .eachOnce = plan.paths {
            warmupSeconds = 0
        } else {
            warmupSeconds = Double(LoadEngine.nanoseconds(plan.warmup)) / 1e9
        }
        self.seconds = seconds
        answered = result.answered
        rps = seconds > 0 ? Double(result.answered) / seconds : 0
        bodyBytesPerSecond = seconds > 0 ? Double(result.bodyBytes) / seconds : 0
        let histogram = result.latency
        if histogram.totalCount == 0 {
            latencyUs = Latency(min: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0)
        } else {
            latencyUs = Latency(
                min: histogram.min, p50: histogram.valueAtPercentile(50), p90: histogram.valueAtPercentile(90),
                p99: histogram.valueAtPercentile(99), p999: histogram.valueAtPercentile(99.9), max: histogram.max,
                mean: (histogram.mean * 10).rounded() / 10)
        }
        var errors = result.errors
        if result.connectFailures > 0 { errors["cannotConnect", default: 0] += result.connectFailures }
        self.errors = errors
        errorCount = errors.values.reduce(0, +)
        statuses = Dictionary(uniqueKeysWithValues: result.statuses.map { (String($0.key), $0.value) })
        sources = result.sources
        unfinished = result.unfinished
    }

    /// The report as one line of JSON, keys sorted.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The report for a person: a few aligned lines.
    public var text: String {
        func number(_ value: Int) -> String {
            let digits = String(value)
            var out = ""
            for (offset, character) in digits.enumerated() {
                if offset > 0 && (digits.count - offset) % 3 == 0 && character != "-" { out += "," }
                out.append(character)
            }
            return out
        }
        func counts(_ values: [String: Int]) -> String {
            values.isEmpty ? "none" : values.sorted { $0.value > $1.value }.map { "\($0.key) \(number($0.value))" }.joined(separator: ", ")
        }
        func micros(_ value: UInt64) -> String {
            value >= 1000 ? "\(Double(value / 10) / 100) ms" : "\(value) µs"
        }
        var lines: [String] = []
        let load = "\(connected) connection\(connected == 1 ? "" : "s")"
            + (connected == connections ? "" : " of \(connections)")
            + " × \(inFlight) in flight on \(loops) loop\(loops == 1 ? "" : "s")"
        lines.append("monarch bench: \(address), \(load)")
        var what = "  paths       \(paths)"
        if let policy { what += "; policy \(policy)" }
        if distinctQueries { what += "; a distinct query per request" }
        lines.append(what)
        lines.append("  measured    \((seconds * 100).rounded() / 100) s after a \(warmupSeconds) s warm-up")
        lines.append("  requests/s  \(number(Int(rps.rounded())))   (\(number(answered)) answered, \(number(Int(bodyBytesPerSecond / 1024))) KiB/s of bodies)")
        lines.append(
            "  latency     p50 \(micros(latencyUs.p50))  p99 \(micros(latencyUs.p99))  p99.9 \(micros(latencyUs.p999))  max \(micros(latencyUs.max))")
        lines.append("  statuses    \(counts(statuses))")
        lines.append("  sources     \(counts(sources))")
        lines.append("  errors      \(counts(errors))" + (unfinished > 0 ? "; \(unfinished) unanswered at the end" : ""))
        return lines.joined(separator: "\n")
    }
}
