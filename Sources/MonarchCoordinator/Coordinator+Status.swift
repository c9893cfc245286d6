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
                    "capacity": .integer(Int64(worker.capacity)), "forgotten": .integer(Int64(worker.forgotten)),
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
            "joinersAskedAlone": .integer(Int64(flights.askedAlone)),
            "waitingForWorkers": .integer(Int64(pools.values.reduce(0) { $0 + $1.waitingCount })),
            "overloaded": .integer(Int64(overloadedRequests)),
            "connectionsRefused": .integer(Int64(refusedConnections)),
            "slowReadersClosed": .integer(Int64(slowReadersClosed)),
            "idleClientsClosed": .integer(Int64(idleClientsClosed)),
            "backgroundRunning": .integer(Int64(flights.work.background.running)),
            "backgroundDropped": .integer(Int64(flights.work.background.dropped)),
            "invalidationsRemembered": .integer(Int64(cachePools.map(\.rememberedInvalidations).reduce(0, +))),
            "draining": .bool(draining),
            "refreshesStarted": .integer(Int64(flights.work.refreshes.started)),
            "writeBacks": .integer(Int64(cachePools.map(\.stores).reduce(0, +))),
            "writeBackFailures": .integer(Int64(cachePools.map(\.storeFailures).reduce(0, +))),
        ]
    }
}
