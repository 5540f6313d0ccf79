// swift-tools-version: 6.1
import PackageDescription

/// A live view-model server on Hummingbird 2 with WebSockets: one `Store` per team board, a snapshot and
/// then list patches to each client. Its own package so the library stays dependency-free.
let package = Package(
    name: "LiveServer",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "live-server", targets: ["LiveServer"]),
        .executable(name: "live-load", targets: ["LiveLoad"]),
        .executable(name: "live-cluster", targets: ["LiveCluster"]),
    ],
    dependencies: [
        .package(name: "Stillwater", path: "../..", traits: ["Hummingbird", "Postgres"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // /metrics: swift-metrics' figures in Prometheus' text format. Swift-log and swift-metrics come with
        // Hummingbird; named here because the board bootstraps them.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "LiveServerCore",
            dependencies: [
                .product(name: "Stillwater", package: "Stillwater"),
                .product(name: "StillwaterLive", package: "Stillwater"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "StillwaterPostgres", package: "Stillwater"),
                .product(name: "StillwaterHummingbird", package: "Stillwater"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            resources: [.copy("Public")]
        ),
        .executableTarget(
            name: "LiveServer", dependencies: ["LiveServerCore", .product(name: "StillwaterPostgres", package: "Stillwater")]),
        .target(
            name: "LoadSupport",
            dependencies: [
                "LiveServerCore",
                .product(name: "Stillwater", package: "Stillwater"),
                .product(name: "StillwaterLive", package: "Stillwater"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ]
        ),
        .executableTarget(name: "LiveLoad", dependencies: ["LiveServerCore", "LoadSupport"]),
        .executableTarget(
            name: "LiveCluster",
            dependencies: [
                "LiveServerCore",
                "LoadSupport",
                .product(name: "StillwaterLive", package: "Stillwater"),
                .product(name: "StillwaterPostgres", package: "Stillwater"),
            ]
        ),
        .testTarget(
            name: "PostgresJournalTests",
            dependencies: [
                "LiveServerCore",
                .product(name: "StillwaterHummingbird", package: "Stillwater"),
                .product(name: "StillwaterPostgres", package: "Stillwater"),
                .product(name: "StillwaterLive", package: "Stillwater"),
                .product(name: "StillwaterTesting", package: "Stillwater"),
            ]
        ),
        .testTarget(
            name: "LiveServerTests",
            dependencies: [
                "LiveServerCore",
                .product(name: "StillwaterLive", package: "Stillwater"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "StillwaterTesting", package: "Stillwater"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
