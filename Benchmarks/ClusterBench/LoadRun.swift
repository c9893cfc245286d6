/// A closed-loop load: `inFlight` workers each issue one request after another for a fixed
/// time; the figures are completions per second and latency percentiles.
struct LoadRun: Sendable {
    /// What one run measured.
    struct Figures: Sendable {
        var completed: Int
        var failed: Int
        var seconds: Double
        var p50Ms: Double
        var p99Ms: Double
        var perSecond: Double { Double(completed) / seconds }

        /// One printable line.
        func line(_ label: String) -> String {
            "\(label): \(Int(perSecond.rounded())) req/s (p50 \(format(p50Ms)) ms, p99 \(format(p99Ms)) ms, \(completed) ok, \(failed) failed, \(format(seconds)) s)"
        }

        private func format(_ value: Double) -> String {
            let scaled = (value * 100).rounded() / 100
            return "\(scaled)"
        }
    }

    var inFlight: Int
    var duration: Duration
    var warmUp: Duration = .milliseconds(500)

    /// Runs `request(slot, sequence)` (true when it succeeded) from `inFlight` tasks.
    func run(_ request: @escaping @Sendable (_ slot: Int, _ sequence: Int) async -> Bool) async -> Figures {
        let clock = ContinuousClock()
        let measureFrom = clock.now + warmUp
        let end = measureFrom + duration
        var ok = 0
        var failed = 0
        var latencies: [Double] = []
        await withTaskGroup(of: (ok: Int, failed: Int, latencies: [Double]).self) { group in
            for slot in 0..<inFlight {
                group.addTask {
                    var sequence = 0
                    var latencies: [Double] = []
                    var ok = 0
                    var failed = 0
                    while clock.now < end {
                        let start = clock.now
                        let succeeded = await request(slot, sequence)
                        sequence += 1
                        guard start >= measureFrom else { continue }
                        if succeeded {
                            ok += 1
                            let elapsed = clock.now - start
                            latencies.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
                        } else {
                            failed += 1
                        }
                    }
                    return (ok, failed, latencies)
                }
            }
            for await slot in group {
                ok += slot.ok
                failed += slot.failed
                latencies += slot.latencies
            }
        }
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return Figures(completed: ok, failed: failed, seconds: seconds, p50Ms: percentile(0.5), p99Ms: percentile(0.99))
    }
}
