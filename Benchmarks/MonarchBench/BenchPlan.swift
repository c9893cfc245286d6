#if canImport(Glibc)
import Glibc
#endif
import MonarchWire

/// What a load run sends and how hard: the connections, the requests kept in flight on each,
/// for how long, and which paths.
public struct BenchPlan: Sendable {
    /// Which paths the requests name.
    public enum Paths: Sendable, Equatable {
        /// Every request names this path.
        case single(String)
        /// `count` paths made from `template` (`{n}` replaced by 0 ..< count), chosen at random
        /// with a Zipf distribution of exponent `exponent` over their ranks (key 0 the most
        /// asked for; exponent 0 is uniform).
        case keys(template: String, count: Int, exponent: Double)
        /// The paths of ``keys(template:count:exponent:)`` each asked for once, in order; the
        /// run ends when every one was answered (or the duration ran out). A warm-up pass.
        case eachOnce(template: String, count: Int)
    }

    /// The coordinator's address.
    public var address: SocketAddress
    /// The token presented in the hello, if the coordinator asks for one.
    public var token: String?
    /// Connections opened to the coordinator.
    public var connections: Int
    /// Requests kept in flight on each connection (a closed loop: an answer sends the next).
    public var inFlight: Int
    /// How long answers are counted (after ``warmup``).
    public var duration: Duration
    /// How long the load runs before answers are counted.
    public var warmup: Duration
    /// Which paths the requests name.
    public var paths: Paths
    /// Whether each request carries a query item of its own (`?bench=<connection>-<n>`), so no
    /// two requests share a cache key or a trip.
    public var distinctQueries: Bool
    /// The domain named in each request (nil: the route's).
    public var domain: String?
    /// The cache policy of each request (nil: the route's).
    public var policy: CachePolicy?
    /// The deadline of each request (nil: the route's).
    public var deadline: Duration?
    /// The body length every response must have; a response with another counts as the
    /// error `bodyMismatch`. Nil: not checked.
    public var bodyCheck: Int?
    /// Event loops (threads) driving the connections; nil picks one per core, at most 2 and
    /// at most one per connection.
    public var loops: Int?
    /// Whether the connections offer the `rawBodies` extension in their hello (bodies as raw
    /// bytes after the JSON); false keeps every body in base64 inside the JSON.
    public var rawBodies = true
    /// How long to wait, once the measured time is over, for the answers still expected
    /// before closing the connections.
    public var drainTimeout: Duration = .seconds(5)

    /// A plan with the given load and everything else at its default.
    public init(
        address: SocketAddress, token: String? = nil, connections: Int = 1, inFlight: Int = 1,
        duration: Duration = .seconds(10), warmup: Duration = .seconds(2), paths: Paths,
        distinctQueries: Bool = false, domain: String? = nil, policy: CachePolicy? = nil,
        deadline: Duration? = nil, bodyCheck: Int? = nil, loops: Int? = nil
    ) {
        self.address = address
        self.token = token
        self.connections = connections
        self.inFlight = inFlight
        self.duration = duration
        self.warmup = warmup
        self.paths = paths
        self.distinctQueries = distinctQueries
        self.domain = domain
        self.policy = policy
        self.deadline = deadline
        self.bodyCheck = bodyCheck
        self.loops = loops
    }

    /// The event loops a run uses: ``loops``, else one per core up to 2, never more than
    /// the connections.
    public var loopCount: Int {
        let cores = max(1, sysconfCores())
        return max(1, min(loops ?? min(cores, 2), connections))
    }

    /// The paths, in words: `hits/7.txt`, `hits/{n}.txt, 1000 keys, Zipf 0.99`.
    public var pathsDescription: String {
        switch paths {
        case .single(let path): path
        case .keys(let template, let count, let exponent):
            "\(template), \(count) keys, " + (exponent == 0 ? "uniform" : "Zipf \(exponent)")
        case .eachOnce(let template, let count): "\(template), each of \(count) keys once"
        }
    }
}

/// The processors this process may run on.
func sysconfCores() -> Int {
    Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}

/// Renders a key's path from a template: `hits/{n}.txt` with 7 gives `hits/7.txt`.
struct PathTemplate: Sendable {
    let prefix: String
    let suffix: String

    /// Splits `template` at its first `{n}`; a template without one gets the number appended.
    init(_ template: String) {
        let bytes = Array(template.utf8)
        let marker = Array("{n}".utf8)
        if let start = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) {
            prefix = String(decoding: bytes[..<start], as: UTF8.self)
            suffix = String(decoding: bytes[(start + marker.count)...], as: UTF8.self)
        } else {
            prefix = template
            suffix = ""
        }
    }

    /// The path of key `index`.
    func path(_ index: Int) -> String { prefix + String(index) + suffix }
}

/// Draws key ranks from a Zipf distribution over `count` ranks: rank k (from 0) with a
/// probability proportional to 1 / (k + 1)^exponent. Exponent 0 is uniform.
struct ZipfSampler: Sendable {
    let count: Int
    let exponent: Double
    /// The cumulative probabilities, rank by rank (empty when uniform).
    private let cumulative: [Double]

    init(count: Int, exponent: Double) {
        self.count = count
        self.exponent = exponent
        guard exponent != 0, count > 1 else {
            cumulative = []
            return
        }
        var sums = [Double](repeating: 0, count: count)
        var total = 0.0
        for rank in 0..<count {
            total += 1 / pow(Double(rank + 1), exponent)
            sums[rank] = total
        }
        for rank in 0..<count { sums[rank] /= total }
        cumulative = sums
    }

    /// The rank for a uniform draw `unit` in [0, 1).
    func rank(for unit: Double) -> Int {
        if cumulative.isEmpty { return min(count - 1, Int(unit * Double(count))) }
        var low = 0
        var high = count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] <= unit { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// A small, fast random generator (SplitMix64); one per event loop, never shared.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A draw in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0) }
}
