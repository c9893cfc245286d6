// swift-tools-version:6.0
// Monarch: request-based, protocol-oriented resource fetching for Swift on Linux.
import PackageDescription

let package = Package(
    name: "Monarch",
    products: [
        .library(name: "MonarchWire", targets: ["MonarchWire"]),
        .library(name: "MonarchLoop", targets: ["MonarchLoop"]),
        .executable(name: "monarch-wire-bench", targets: ["WireBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C libraries, each from its Debian package.
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),

        // The wire protocol core: framing and the message codec. Pure Swift, no I/O.
        .target(name: "MonarchWire"),

        // The libuv layer: event loops, streams, listeners, timers, and the bridge to Swift concurrency.
        .target(
            name: "MonarchLoop",
            dependencies: [
                "CLibUV",
                "MonarchWire",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Benchmarks: frame round trips on the Swift layer against a C program on libuv.
        .executableTarget(
            name: "WireBench",
            dependencies: [
                "MonarchLoop",
                "MonarchWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/WireBench"
        ),
        .executableTarget(
            name: "wire-bench-c",
            dependencies: ["CLibUV"],
            path: "Benchmarks/CBaseline"
        ),

        .testTarget(name: "MonarchWireTests", dependencies: ["MonarchWire"]),
        .testTarget(name: "MonarchLoopTests", dependencies: ["MonarchLoop", "MonarchWire"]),
    ]
)
