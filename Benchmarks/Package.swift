// swift-tools-version: 6.1
import PackageDescription

/// Stillwater parts the benchmarks can use once they exist. Uncomment a line when its part lands (or
/// try it first with `swift run -c release -Xswiftc -DSTILLWATER_STORE benchmarks`); the code each
/// switch turns on lives in `Sources/Benchmarks/StillwaterAdapters.swift`.
let stillwaterParts: [SwiftSetting] = [
    .define("STILLWATER_PROPERTY"),  // MutableProperty + scope(\.path)  -> W4
    .define("STILLWATER_STORE"),     // Store + Action                   -> W5, W5b
    .define("STILLWATER_DIFF"),      // Changeset + Diffable             -> W6
]

let package = Package(
    name: "StillwaterBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "benchmarks", targets: ["Benchmarks"]),
    ],
    dependencies: [
        .package(name: "Stillwater", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .target(name: "MallocCounter"),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "MallocCounter",
                .product(name: "Stillwater", package: "Stillwater"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: stillwaterParts
        ),
    ],
    swiftLanguageModes: [.v6]
)
