import MonarchWire

/// The human form of a status report: a few aligned tables.
enum StatusTable {
    /// The report as text, ending with a newline.
    static func render(_ report: StatusReport) -> String {
        var lines: [String] = []
        lines.append(
            "monarch \(report.version) — up \(duration(report.uptimeMs)) — \(report.clients) client\(report.clients == 1 ? "" : "s"), "
                + "\(report.requestsInFlight) request\(report.requestsInFlight == 1 ? "" : "s") in flight"
                + (report.draining ? " — draining" : ""))
        lines.append("")
        lines += table(["POOL", "DESIRED", "LIVE", "STATE"], report.pools.map { pool in
            [pool.kind, pool.desired.map(String.init) ?? "remote", String(pool.live),
             pool.state.rawValue + (pool.reason.map { " (\($0))" } ?? "")]
        })
        lines.append("")
        lines += table(
            ["WORKER", "KIND", "STATE", "PID", "IN FLIGHT", "SERVED", "FAILURES", "RESTARTS", "UPTIME", "RSS"],
            report.workers.map { worker in
                [worker.id + (worker.local ? "" : " (remote)"), worker.kind, worker.state.rawValue,
                 worker.pid.map(String.init) ?? "-", "\(worker.inFlight)/\(worker.capacity)", String(worker.answered),
                 String(worker.failures), String(worker.restarts), duration(worker.uptimeMs),
                 worker.rssBytes.map(bytes) ?? "-"]
            })
        let stores = report.workers.compactMap { worker in worker.store.map { (worker.id, $0) } }
        if !stores.isEmpty {
            lines.append("")
            lines += table(["WORKER", "STORE", "STATE", "SUBSCRIBED", "RECONNECTS", "DROPPED WRITES", "UNAVAILABLE READS"], stores.map {
                id, store in
                [id, store.address, store.state.rawValue, store.subscribed ? "yes" : "no", String(store.reconnects),
                 String(store.droppedWrites), String(store.unavailableReads)]
            })
        }
        if !report.domains.isEmpty {
            lines.append("")
            lines += table(["DOMAIN", "LAST MINUTE", "HIT RATIO", "HOT HITS", "P50", "P99", "P99.9"], report.domains.map { domain in
                [domain.name, String(domain.requests), percent(domain.hitRatio), domain.hotHits.map(String.init) ?? "-",
                 milliseconds(domain.p50Ms), milliseconds(domain.p99Ms), milliseconds(domain.p999Ms)]
            })
        }
        lines.append("")
        lines.append("answers by source: " + counts(report.answersBySource))
        lines.append("failures by code: " + counts(report.failuresByCode))
        lines.append(
            "trips \(report.tripsStarted) started, \(report.tripsJoined) joined · write-backs \(report.writeBacks) "
                + "(\(report.writeBackFailures) failed) · overloaded \(report.overloaded) · refused connections "
                + "\(report.connectionsRefused) · unresponsive workers \(report.unresponsiveWorkers)")
        if let hot = report.hotTier {
            lines.append(
                "hot tier \(hot.entries) answers in \(bytes(hot.bytes)) of \(bytes(hot.budgetBytes)) · \(hot.hits) hits · "
                    + "\(hot.evictions) evicted · \(hot.refusedAfterChange) not kept after a change")
        }
        if let watches = report.watches {
            lines.append(
                "watches \(watches) · changes sent \(report.watchEventsSent ?? 0), dropped for slow watchers \(report.watchEventsDropped ?? 0)"
                    + (report.sharedChanges.map { $0 > 0 ? " · from other coordinators \($0)" : "" } ?? ""))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Rows under a header, each column as wide as its widest cell.
    static func table(_ header: [String], _ rows: [[String]]) -> [String] {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                column == row.count - 1 ? row[column] : row[column].padding(to: widths[column])
            }.joined(separator: "  ")
        }
    }

    static func duration(_ milliseconds: Int) -> String {
        let seconds = milliseconds / 1000
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m \(seconds % 60)s" }
        return "\(seconds / 3600)h \(seconds / 60 % 60)m"
    }

    static func bytes(_ count: Int) -> String {
        let megabytes = Double(count) / 1_048_576
        return megabytes >= 10 ? "\(Int(megabytes.rounded())) MB" : "\(Double(Int(megabytes * 10)) / 10) MB"
    }

    static func percent(_ ratio: Double) -> String { "\(Double(Int(ratio * 1000)) / 10)%" }

    static func milliseconds(_ value: Double) -> String {
        value >= 10 ? "\(Int(value.rounded())) ms" : "\(Double(Int(value * 100)) / 100) ms"
    }

    static func counts(_ values: [String: Int]) -> String {
        values.isEmpty ? "none" : values.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}

extension String {
    /// The string followed by spaces up to `width` characters.
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
