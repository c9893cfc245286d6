// swift-tools-version:6.0
// Monarch: request-based, protocol-oriented resource fetching for Swift on Linux.
import PackageDescription

let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")

let package = Package(
    name: "Monarch",
    products: [
        .library(name: "Monarch", targets: ["Monarch"]),
        .library(name: "MonarchRouter", targets: ["MonarchRouter"]),
        .library(name: "MonarchClient", targets: ["MonarchClient"]),
        .library(name: "MonarchQuery", targets: ["MonarchQuery"]),
        .library(name: "MonarchWire", targets: ["MonarchWire"]),
        .library(name: "MonarchLoop", targets: ["MonarchLoop"]),
        .library(name: "MonarchTransport", targets: ["MonarchTransport"]),
        .executable(name: "monarch", targets: ["MonarchCLI"]),
        .executable(name: "monarch-bundle-worker", targets: ["BundleWorker"]),
        .executable(name: "monarch-cache-worker", targets: ["CacheWorker"]),
        .executable(name: "monarch-network-worker", targets: ["NetworkWorker"]),
        .executable(name: "monarch-example", targets: ["ClientExample"]),
        .executable(name: "monarch-wire-bench", targets: ["WireBench"]),
        .executable(name: "monarch-bench", targets: ["ClusterBench"]),
        .executable(name: "monarch-cache-bench", targets: ["CacheBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64", from: "1.0.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    ],
    targets: [
        // C libraries, each from its Debian package.
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a warning; the
        // headers are under /usr/include/hiredis and the module map links libhiredis itself.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Debian's libhttp-parser (nodejs/http-parser 2.9, built strict): HTTP/1.x requests.
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),

        // HTTP/1.1 for the coordinator's front door: requests read strictly (the C parser
        // behind a check that refuses every smuggling form) and response heads. No I/O.
        .target(name: "MonarchHTTP", dependencies: ["CHTTPParser"]),

        // The byte level of the wire protocol: frames (length-prefixed payloads) and socket
        // addresses. Pure Swift, no I/O; the libuv layer and the message codec both build on it.
        .target(name: "MonarchFraming"),

        // The wire protocol core: the messages and their codec (re-exporting MonarchFraming).
        // Pure Swift, no I/O.
        .target(
            name: "MonarchWire",
            dependencies: ["MonarchFraming", .product(name: "ExtrasBase64", package: "swift-extras-base64")]
        ),

        // Requests, domains, providers and the responder chain; runs in-process with no cluster.
        .target(name: "Monarch", dependencies: ["MonarchWire"]),

        // Path patterns -> routes, and the parsing of request paths. Pure Swift.
        .target(name: "MonarchRouter", dependencies: ["MonarchWire"]),

        // The cluster's YAML configuration, validated with key paths.
        .target(
            name: "MonarchConfig",
            dependencies: ["MonarchWire", .product(name: "Yams", package: "Yams")]
        ),

        // The libuv layer: event loops, streams, listeners, timers, files, child processes,
        // and the bridge to Swift concurrency.
        .target(
            name: "MonarchLoop",
            dependencies: [
                "CLibUV",
                "MonarchFraming",
                .product(name: "DequeModule", package: "swift-collections"),
                logging,
            ]
        ),

        // The wire protocol's messages over the libuv layer's frames: message connections, loop-level
        // and async, for the coordinator, the workers, the client and the benchmarks; the
        // MessageConnection protocol they share with an in-memory pair that passes messages unencoded.
        .target(
            name: "MonarchTransport",
            dependencies: ["MonarchLoop", "MonarchWire", .product(name: "DequeModule", package: "swift-collections")]
        ),

        // The coordinator: client and worker sessions, pools, the domain table, the chain over
        // the wire, coalescing, deadlines, and the supervisor of local workers.
        .target(
            name: "MonarchCoordinator",
            dependencies: [
                "Monarch", "MonarchRouter", "MonarchConfig", "MonarchHTTP", "MonarchLoop", "MonarchTransport", "MonarchWire", logging,
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        // What every worker process shares: dialling in, registering, serving requests.
        .target(
            name: "MonarchWorker",
            dependencies: ["Monarch", "MonarchLoop", "MonarchTransport", "MonarchWire", argumentParser, logging]
        ),

        // The client side of the wire protocol (the CLI and Swift programs use it).
        .target(
            name: "MonarchClient", dependencies: ["Monarch", "MonarchLoop", "MonarchRouter", "MonarchTransport", "MonarchWire"]
        ),

        // Queries, mutations and pages over any MonarchService (cluster, in-process, preview).
        .target(name: "MonarchQuery", dependencies: ["Monarch", "MonarchRouter", "MonarchWire"]),

        // The `monarch` command.
        .executableTarget(
            name: "MonarchCLI",
            dependencies: [
                "Monarch", "MonarchBench", "MonarchClient", "MonarchConfig", "MonarchCoordinator", "MonarchLoop",
                "MonarchWire", argumentParser, logging,
            ]
        ),
        // `monarch bench`'s load engine: closed-loop load on the wire protocol from loop-level
        // connections, latencies in an HdrHistogram.
        .target(
            name: "MonarchBench",
            dependencies: [
                "MonarchLoop", "MonarchTransport", "MonarchWire", .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Benchmarks/MonarchBench"
        ),

        // Workers: one executable each, their logic in a library the tests reach.
        // openat2(2), which glibc does not wrap, for the bundle's opens beneath its folder.
        .target(name: "CBundleShim", path: "Workers/Bundle/Shim"),
        .target(
            name: "MonarchBundle",
            dependencies: ["CBundleShim", "Monarch", "MonarchLoop", "MonarchRouter", "MonarchWire"],
            path: "Workers/Bundle/Sources"
        ),
        .executableTarget(
            name: "BundleWorker",
            dependencies: ["MonarchBundle", "MonarchWorker", "MonarchLoop", "MonarchWire", argumentParser, logging],
            path: "Workers/Bundle/Main"
        ),
        // hiredis's libuv adapter (static functions in a header) compiled once, behind plain calls.
        .target(name: "CRedisShim", dependencies: ["CHiredis"], path: "Workers/Cache/RedisShim"),
        .target(
            name: "MonarchCache",
            dependencies: [
                "CHiredis", "CRedisShim", "CSQLite", "Monarch", "MonarchLoop", "MonarchWire", "MonarchWorker", logging,
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            path: "Workers/Cache/Sources"
        ),
        .executableTarget(
            name: "CacheWorker",
            dependencies: [
                "MonarchCache", "MonarchWorker", "MonarchLoop", "MonarchWire", argumentParser, logging,
            ],
            path: "Workers/Cache/Main"
        ),
        // libcurl's variadic calls, wrapped for Swift.
        .target(name: "CCurlShim", dependencies: ["CCurl"], path: "Workers/Network/Shim"),
        .target(
            name: "MonarchNetwork",
            dependencies: ["CCurl", "CCurlShim", "CLibUV", "Monarch", "MonarchLoop", "MonarchWire", "MonarchWorker", logging],
            path: "Workers/Network/Sources"
        ),
        .executableTarget(
            name: "NetworkWorker",
            dependencies: ["MonarchNetwork", "MonarchWorker", "MonarchLoop", "MonarchWire", argumentParser, logging],
            path: "Workers/Network/Main"
        ),

        // The client library's example program (README: "Using it from Swift"); ClusterTests run it.
        .executableTarget(
            name: "ClientExample",
            dependencies: ["Monarch", "MonarchClient", "MonarchLoop", "MonarchQuery", "MonarchWire", argumentParser],
            path: "Examples/ClientExample"
        ),

        // Benchmarks: frame round trips on the Swift layer against a C program on libuv.
        .executableTarget(
            name: "WireBench",
            dependencies: ["MonarchLoop", "MonarchTransport", "MonarchWire", argumentParser],
            path: "Benchmarks/WireBench"
        ),
        // Benchmarks of a whole local cluster: cache hits, network fetches against a local origin.
        .executableTarget(
            name: "ClusterBench",
            dependencies: ["Monarch", "MonarchClient", "MonarchLoop", "MonarchNetwork", "MonarchWire", argumentParser],
            path: "Benchmarks/ClusterBench"
        ),
        // The cache worker as a real process: stores per second, memory, restart to first hit.
        .executableTarget(
            name: "CacheBench",
            dependencies: ["MonarchLoop", "MonarchTransport", "MonarchWire", argumentParser, logging],
            path: "Benchmarks/CacheBench"
        ),
        .executableTarget(
            name: "wire-bench-c",
            dependencies: ["CLibUV"],
            path: "Benchmarks/CBaseline"
        ),

        .testTarget(name: "MonarchWireTests", dependencies: ["MonarchWire"]),
        .testTarget(name: "MonarchHTTPTests", dependencies: ["MonarchHTTP"]),
        .testTarget(name: "MonarchLoopTests", dependencies: ["MonarchLoop", "MonarchTransport", "MonarchWire", "TestWaiting"]),
        .testTarget(name: "MonarchTests", dependencies: ["Monarch", "MonarchWire", "TestWaiting"]),
        .testTarget(name: "MonarchQueryTests", dependencies: ["Monarch", "MonarchQuery", "MonarchWire", "TestWaiting"]),
        .testTarget(name: "MonarchBenchTests", dependencies: ["MonarchBench", "MonarchWire"]),
        .testTarget(name: "MonarchRouterTests", dependencies: ["MonarchRouter", "MonarchWire"]),
        .testTarget(name: "MonarchConfigTests", dependencies: ["MonarchConfig", "MonarchWire"]),
        .testTarget(
            name: "MonarchCoordinatorTests",
            dependencies: [
                "Monarch", "MonarchBundle", "MonarchClient", "MonarchConfig", "MonarchCoordinator", "MonarchLoop", "MonarchRouter",
                "MonarchTransport", "MonarchWire", "MonarchWorker", "TestWaiting",
            ]
        ),
        .testTarget(
            name: "MonarchBundleTests",
            dependencies: [
                "Monarch", "MonarchBundle", "MonarchLoop", "MonarchTransport", "MonarchWire", "MonarchWorker", "TestOrigins",
                "TestWorkerHarness",
            ]
        ),
        .testTarget(
            name: "MonarchCacheTests",
            dependencies: [
                "CSQLite", "Monarch", "MonarchCache", "MonarchLoop", "MonarchTransport", "MonarchWire", "MonarchWorker",
                "TestOrigins", "TestWorkerHarness", logging,
            ]
        ),
        // Starts its own HTTP origins (Python scripts in Origin/) on 127.0.0.1.
        .testTarget(
            name: "MonarchNetworkTests",
            dependencies: [
                "Monarch", "MonarchNetwork", "MonarchLoop", "MonarchTransport", "MonarchWire", "MonarchWorker", "TestOrigins",
                "TestWaiting", "TestWorkerHarness",
            ]
        ),
        // What the tests share: HTTP servers they start on 127.0.0.1 (a small origin written for
        // them, and httpbin), and the spawning of child processes on posix_spawn.
        .target(name: "TestOrigins", dependencies: ["CTestSpawn"], path: "Tests/TestOrigins", exclude: ["Origin"]),
        // Waiting on a condition with a deadline, for every test target that waits.
        .target(name: "TestWaiting", path: "Tests/TestWaiting"),
        // The coordinator's side of worker connections, played by the worker tests.
        .target(
            name: "TestWorkerHarness", dependencies: ["MonarchLoop", "MonarchTransport", "MonarchWire"],
            path: "Tests/TestWorkerHarness"),
        // pipe2 and posix_spawn_file_actions_addclosefrom_np, which need _GNU_SOURCE.
        .target(name: "CTestSpawn", path: "Tests/CTestSpawn"),
        // Integration: the real `monarch` and worker executables on temporary sockets.
        .testTarget(
            name: "ClusterTests",
            dependencies: [
                "Monarch", "MonarchClient", "MonarchLoop", "MonarchQuery", "MonarchRouter", "MonarchTransport", "MonarchWire",
                "TestOrigins", "TestWaiting",
            ]
        ),
    ]
)
