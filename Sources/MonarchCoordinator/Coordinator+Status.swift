import MonarchWire

extension Coordinator {
    /// What the coordinator is doing, as a `result` message's data.
    func statusReport() -> [String: JSONValue] {
        var workers: [JSONValue] = []
        for kind in pools.keys.sorted() {
            for worker in pools[kind]!.workers {
                var entry: [String: JSONValue] = [
                    "id": .string(worker.id), "kind": .string(worker.kind),
                    "inFlight": .integer(Int64(worker.outstanding.count)),
                    "forwarded": .integer(Int64(worker.forwarded)), "answered": .integer(Int64(worker.answered)),
                ]
                if let pid = worker.hello.pid { entry["pid"] = .integer(Int64(pid)) }
                if let name = worker.hello.name { entry["name"] = .string(name) }
                workers.append(.object(entry))
            }
        }
        return [
            "workers": .array(workers),
            "clients": .integer(Int64(clients.count)),
            "requestsInFlight": .integer(Int64(requestsInFlight)),
            "tripsStarted": .integer(Int64(flights.started)),
            "tripsJoined": .integer(Int64(flights.joined)),
            "draining": .bool(draining),
            "refreshesStarted": .integer(Int64(flights.refreshes.started)),
            "writeBacks": .integer(Int64(cachePools.map(\.stores).reduce(0, +))),
            "writeBackFailures": .integer(Int64(cachePools.map(\.storeFailures).reduce(0, +))),
        ]
    }
}
