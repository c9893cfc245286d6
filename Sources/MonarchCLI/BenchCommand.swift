import ArgumentParser
import MonarchBench
import MonarchConfig
import MonarchLoop
import MonarchWire

/// `monarch bench`: closed-loop load on the wire protocol against a running coordinator.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load a running coordinator: requests per second and latency percentiles.",
        discussion: """
            Opens --connections connections to the coordinator (found like every command's: \
            --address, MONARCH_ADDRESS, the configuration; MONARCH_TOKEN or the configuration's \
            token) and keeps --in-flight requests in flight on each, each answer sending the next \
            (a closed loop), for --warmup and then --duration, counting only the answers of the \
            measured time. Connections are driven from one event loop per core (at most 2, \
            --loops to change it). Paths: --path P asks for one path; --keys N asks for N paths \
            made from --path-template (its {n} replaced by 0 … N-1) with a Zipf mix of exponent \
            --zipf (0: uniform); add --each-once to ask for every key once, in order, and stop \
            (a warm-up pass; --duration then only bounds it). --distinct-queries gives every \
            request a query item of its own (no coalescing, no cache key shared). \
            Prints requests per second, p50/p99/p99.9 latency (HdrHistogram, microseconds) and \
            errors by code, or with --json one object. Exits 2 when no connection could be made, \
            1 when any request failed (its codes are printed, and the figures are not a result) \
            or nothing was answered.
            """
    )

    @Option(help: "The one path every request asks for (unless --keys).")
    var path: String?

    @Option(help: "Ask for N paths made from --path-template.")
    var keys: Int?

    @Option(help: "The paths of --keys: {n} stands for the key's number, 0 … N-1.")
    var pathTemplate = "path-{n}"

    @Option(help: "The exponent of the Zipf mix over --keys (0: uniform).")
    var zipf = 0.99

    @Flag(help: "With --keys: ask for each key once, in order, then stop.")
    var eachOnce = false

    @Option(help: "Connections to the coordinator.")
    var connections = 1

    @Option(help: "Requests kept in flight on each connection.")
    var inFlight = 1

    @Option(help: "How long answers are counted, such as 10s.")
    var duration = "10s"

    @Option(help: "How long the load runs before answers are counted.")
    var warmup = "2s"

    @Flag(help: "Give every request a query item of its own (defeats coalescing and caching).")
    var distinctQueries = false

    @Option(help: "Cache policy: cacheFirst, networkFirst, cacheThenRefresh or noCache (default: the route's).")
    var policy: CachePolicy?

    @Option(help: "The domain of every request (default: the route's).")
    var domain: String?

    @Option(help: "The deadline of every request, such as 2s (default: the route's).")
    var deadline: String?

    @Option(help: "Check that every body is this long, such as 1024 or 1KB (a mismatch is the error bodyMismatch).")
    var bodyCheck: String?

    @Option(help: "Event loops driving the connections (default: one per core, at most 2).")
    var loops: Int?

    @Flag(help: "Carry bodies in base64 inside the JSON (do not offer the rawBodies extension).")
    var base64Bodies = false

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var coordinator: CoordinatorOptions

    func validate() throws {
        guard connections >= 1 else { throw ValidationError("--connections must be at least 1") }
        guard inFlight >= 1 else { throw ValidationError("--in-flight must be at least 1") }
        if let loops, loops < 1 { throw ValidationError("--loops must be at least 1") }
        if let keys {
            guard keys >= 1 else { throw ValidationError("--keys must be at least 1") }
            guard path == nil else { throw ValidationError("give --path or --keys, not both") }
        } else {
            guard path != nil else { throw ValidationError("give --path P, or --keys N (with --path-template)") }
            guard !eachOnce else { throw ValidationError("--each-once goes with --keys") }
        }
        guard zipf >= 0, zipf.isFinite else { throw ValidationError("--zipf must be 0 or more") }
        _ = try plan(address: .unix(path: "/"), token: nil)
    }

    /// The load plan the options describe.
    func plan(address: SocketAddress, token: String?) throws -> BenchPlan {
        func duration(_ text: String, _ option: String) throws -> Duration {
            guard let value = parseDuration(text) else {
                throw ValidationError("\(option): expected a duration such as 500ms or 10s, got \"\(text)\"")
            }
            return value
        }
        let paths: BenchPlan.Paths
        if let keys {
            paths = eachOnce ? .eachOnce(template: pathTemplate, count: keys) : .keys(template: pathTemplate, count: keys, exponent: zipf)
        } else {
            paths = .single(path ?? "")
        }
        var checked: Int?
        if let bodyCheck {
            guard let bytes = parseByteSize(bodyCheck) else {
                throw ValidationError("--body-check: expected a byte size such as 1024 or 1KB, got \"\(bodyCheck)\"")
            }
            checked = bytes
        }
        let measured = try duration(self.duration, "--duration")
        guard measured > .zero else { throw ValidationError("--duration must be more than 0") }
        var plan = BenchPlan(
            address: address, token: token, connections: connections, inFlight: inFlight, duration: measured,
            warmup: try duration(warmup, "--warmup"), paths: paths, distinctQueries: distinctQueries, domain: domain,
            policy: policy, deadline: try deadline.map { try duration($0, "--deadline") }, bodyCheck: checked,
            loops: loops)
        plan.rawBodies = !base64Bodies
        return plan
    }

    func run() async throws {
        _ = coordinator.config.startProcess()
        ProcessSetup.raiseDescriptorLimit()
        let plan: BenchPlan
        do {
            plan = try self.plan(address: coordinator.coordinatorAddress(), token: coordinator.token())
        } catch let problem as ConfigurationProblem {
            throw problem
        } catch {
            printToStandardError("monarch bench: \(error)")
            throw ExitCode.validationFailure
        }
        let report: BenchReport
        do {
            report = try await LoadEngine.run(plan)
        } catch {
            printToStandardError("monarch bench: \(error) (the address is from \(coordinator.addressSource))")
            throw ExitCode(2)
        }
        writeAll(Array(((json ? report.json : report.text) + "\n").utf8), to: 1)
        if report.errorCount > 0 {
            let codes = report.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            printToStandardError("monarch bench: \(report.errorCount) requests failed (\(codes)): these figures are not a result")
            throw ExitCode.failure
        }
        if report.answered == 0 { throw ExitCode.failure }
    }
}
