import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// A real browser through the HTTP front door: Debian's headless Chromium, driven over the
/// DevTools protocol by `Tests/Browser/browse.mjs` (node), loads a page of a bundle folder
/// served through a cache, reloads it, and sees a purge. Chromium and node are installed by
/// scripts/install-deps; without them the test fails and says so.
@Suite("A real browser", .serialized)
struct BrowserTests {
    /// The repository's root (this file is Tests/ClusterTests/BrowserTests.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// A 1×1 GIF, written out by hand from the GIF89a layout: header, a screen of 1×1 with a
    /// two-colour table (black, white), one image of 1×1 whose LZW data (code size 2: clear,
    /// colour 0, end) packs into 0x44 0x01, and the trailer.
    static let gif: [UInt8] = Array("GIF89a".utf8) + [
        0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00,  // 1×1, a global table of 2 colours
        0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF,  // black, white
        0x2C, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,  // the image at 0,0, 1×1
        0x02, 0x02, 0x44, 0x01, 0x00,  // LZW code size 2, one block of 2 bytes, the end
        0x3B,  // trailer
    ]

    @Test("Chromium loads a page with its script and image through the front door; a reload asks again and is answered from the cache; after a purge the next reload shows the change")
    func pageLoadsReloadsAndSeesAPurge() async throws {
        try await ClusterGate.inTurn { try await pageBody() }
    }

    private func pageBody() async throws {
        let chromium = "/usr/bin/chromium"
        guard FileManager.default.isExecutableFile(atPath: chromium) else {
            Issue.record("\(chromium) is not installed: scripts/install-deps installs Debian's chromium")
            return
        }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("site/index.html", """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>Monarch</title></head>
            <body><p id="out">the script did not run</p><img id="logo" src="logo.gif" alt="logo">
            <script src="app.js"></script></body></html>

            """)
        try folder.write("site/app.js", "document.getElementById('out').textContent = 'script v1'\n")
        try folder.write("site/logo.gif", Self.gif)
        try Self.writeConfiguration(in: folder)

        let up = try FirstMinutesTests.start(Executables.monarch, ["up"], in: folder.path)
        defer { _ = up.signal(SIGKILL) }
        try await FirstMinutesTests.waitFor("ready", from: up)
        let port = try #require(HTTPFetch.port(inOutput: up.standardOutput.text), "\(up.standardOutput.text)")

        let steps: [[String: String]] = [
            ["do": "load", "path": "/index.html"],
            ["do": "reload"],
            ["do": "write", "file": folder.path + "/site/app.js", "text": "document.getElementById('out').textContent = 'script v2'\n"],
            ["do": "reload"],
            ["do": "purge", "path": "/app.js"],
            ["do": "reload"],
        ]
        let lines = try await Self.browse(port: port, steps: steps)
        try #require(lines.count == steps.count, "one line per step: \(lines)")

        // The first load: the page, its script (which ran) and its image, all 200s through the chain.
        let load = lines[0]
        #expect(load.out == "script v1", "\(load)")
        #expect(load.image == BrowserLine.Image(complete: true, width: 1, height: 1), "\(load)")
        for path in ["/index.html", "/app.js", "/logo.gif"] {
            #expect(load.request(path)?.status == 200, "\(path): \(load)")
        }

        // A reload asks the front door again for each (none is taken from Chromium's own cache
        // unasked), and the cache answers.
        let reload = lines[1]
        #expect(reload.out == "script v1" && reload.image?.width == 1, "\(reload)")
        for path in ["/app.js", "/logo.gif"] {
            let request = reload.request(path)
            #expect(request?.fromBrowserCache == false, "\(path): \(reload)")
            #expect(request?.status == 200 || request?.status == 304, "\(path): \(reload)")
            #expect(request?.status == 304 || request?.cacheStatus?.contains("hit") == true, "\(path): \(reload)")
        }
        // A revalidation proper: Chromium asks with the bundle's ETag and is answered 304.
        for path in ["/app.js", "/logo.gif"] {
            let request = reload.request(path)
            #expect(request?.conditional == true && request?.status == 304, "\(path): \(reload)")
        }

        // The script changed on disk: the cache still holds the first one, fresh for 60 s.
        #expect(lines[3].out == "script v1", "\(lines[3])")

        // A purge drops it: the next reload runs the new script.
        #expect((200..<300).contains(lines[4].status ?? 0), "\(lines[4])")
        #expect(lines[5].out == "script v2", "\(lines[5])")
        #expect(lines[5].request("/app.js")?.status == 200, "\(lines[5])")
        _ = up.signal(SIGINT)
        _ = try await up.waitForExit(timeout: .seconds(30))
    }

    /// Writes monarch.yml in `folder`: HTTP on a free port, site/ through a cache (fresh for
    /// 60 s), and purges from 127.0.0.1.
    static func writeConfiguration(in folder: TemporaryFolder) throws {
        try folder.write("monarch.yml", """
            listen: {clients: unix:run/c.sock, workers: unix:run/w.sock, http: tcp:127.0.0.1:0}
            domains: {site: [cache, bundle]}
            routes: [{match: "...", domain: site, ttl: 60s}]
            workers: {bundle: {root: site}, cache: {memory: 8MB}}
            http: {purgeFrom: [127.0.0.1]}

            """)
    }

    /// Runs browse.mjs against 127.0.0.1:`port` and returns its lines, one per step.
    static func browse(port: UInt16, steps: [[String: String]]) async throws -> [BrowserLine] {
        let script = root + "/Tests/Browser/browse.mjs"
        let stepsJSON = String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self)
        let node = try Spawned(
            "/usr/bin/env", ["node", script, "--base", "http://127.0.0.1:\(port)", "--steps", stepsJSON, "--timeout", "100"])
        // node and the Chromium it starts share a process group of their own.
        defer { kill(-node.pid, SIGKILL) }
        let status = try await node.waitForExit(timeout: 120)
        try #require(status == 0, "browse.mjs exited \(status):\n\(node.stderr.text)")
        return try node.stdout.text.split(separator: "\n").map {
            try JSONDecoder().decode(BrowserLine.self, from: Data($0.utf8))
        }
    }
}

/// One line of browse.mjs: a step, what the page held after it, and the requests it made.
struct BrowserLine: Decodable, CustomStringConvertible {
    struct Image: Decodable, Equatable {
        var complete: Bool
        var width: Int
        var height: Int
    }

    struct Request: Decodable {
        var path: String
        var status: Int?
        var conditional: Bool
        var fromBrowserCache: Bool
        var cacheStatus: String?
        var failed: String?
    }

    struct Page: Decodable {
        var out: String?
        var image: Image?
    }

    var step: String
    var dom: Page?
    var requests: [Request]?
    /// A purge's status.
    var status: Int?
    var body: String?

    /// The text of #out.
    var out: String? { dom?.out }
    /// The image #logo as loaded.
    var image: Image? { dom?.image }

    /// The last request for `path` in this step.
    func request(_ path: String) -> Request? { requests?.last { $0.path == path } }

    var description: String {
        let requests = (requests ?? []).map { "\($0.path) \($0.status.map(String.init) ?? "-")\($0.conditional ? " conditional" : "")\($0.fromBrowserCache ? " browser-cache" : "") [\($0.cacheStatus ?? "")]" }
        return "\(step): out=\(out ?? "nil") image=\(image.map { "\($0.width)x\($0.height)" } ?? "nil") status=\(status.map(String.init) ?? "-") requests: \(requests.joined(separator: ", "))"
    }
}
