import Logging
import MonarchConfig
import MonarchRouter
import MonarchWire

extension Coordinator {
    /// Applies `file`, the configuration read again (`monarch up` does on SIGHUP): its routes,
    /// domains and limits from the next request on, and its pool sizes through the same runs
    /// as `monarch scale`. Requests in flight finish on the routing they started with; nothing
    /// is dropped. What only a restart applies is kept as it runs and logged (see
    /// ``ReloadPlan``).
    ///
    /// - Returns: what the file changes that only a restart applies.
    /// - Throws: ``ConfigError`` when `file` cannot be applied (a route that does not compile,
    ///   a domain naming a provider kind this coordinator has no pool for); nothing changes then.
    @discardableResult
    func reload(_ file: Configuration) throws(ConfigError) -> [String] {
        let plan = try ReloadPlan(running: routing.configuration, file: file)
        let router = try Router<RouteOptions>(routes: plan.configuration.routes)
        routing = Routing(
            configuration: plan.configuration, router: router, pools: pools,
            cachePools: Dictionary(uniqueKeysWithValues: cachePools.map { ($0.kind, $0) }))
        for (kind, count) in plan.scales.sorted(by: { $0.key < $1.key }) {
            Task(executorPreference: loop) { [self] in
                let answer = await scale(ScaleMessage(id: 0, kind: kind, count: count))
                if case .failure(let failure) = answer {
                    logger.error("reload: the \(kind) pool did not reach \(count) workers: \(failure.error.message)")
                } else {
                    logger.info("reload: the \(kind) pool runs \(count) workers")
                }
            }
        }
        let restart = plan.needsRestart.isEmpty ? "" : "; left for a restart: " + plan.needsRestart.joined(separator: ", ")
        logger.notice("reloaded: \(plan.configuration.routes.count) routes, \(plan.configuration.domains.count) domains\(restart)")
        return plan.needsRestart
    }
}
