// swift-tools-version: 6.1
import PackageDescription

/// A live poll: one question, a running tally every browser sees, one command (vote). A second app on
/// StillwaterLive and its Hummingbird adapter, beside the live board.
let package = Package(
    name: "LivePoll",
    platforms: [.macOS(.v15)],
    products: [.executable(name: "live-poll", targets: ["LivePoll"])],
    dependencies: [
        .package(name: "Stillwater", path: "../..", traits: ["Hummingbird"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .target(name: "PollCore", dependencies: [
            .product(name: "Stillwater", package: "Stillwater"),
            .product(name: "StillwaterLive", package: "Stillwater"),
        ]),
        .executableTarget(
            name: "LivePoll",
            dependencies: [
                "PollCore",
                .product(name: "StillwaterHummingbird", package: "Stillwater"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("index.html")]
        ),
        .testTarget(name: "PollTests", dependencies: [
            "PollCore",
            .product(name: "StillwaterLive", package: "Stillwater"),
            .product(name: "StillwaterHummingbird", package: "Stillwater"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
