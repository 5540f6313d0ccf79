// swift-tools-version: 6.1
import PackageDescription

/// Which Stillwater body W4 and W5 run. Every part the workloads use is built, and these switches run
/// it; W4 and W5 were written before `MutableProperty` and `Store` existed, and the stand-ins they used
/// then (a `BehaviorRelay` with a reducer) are kept for comparison: comment a line out to run its
/// stand-in instead. The code of both forms lives in `Sources/Benchmarks/StillwaterAdapters.swift`.
let stillwaterParts: [SwiftSetting] = [
    .define("STILLWATER_PROPERTY"),  // MutableProperty + map   -> W4  (off: BehaviorRelay + map)
    .define("STILLWATER_STORE"),     // Store + Action          -> W5, W5b  (off: BehaviorRelay + reducer)
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
        .target(name: "Callgrind"),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "MallocCounter",
                "Callgrind",
                .product(name: "Stillwater", package: "Stillwater"),
                .product(name: "StillwaterLive", package: "Stillwater"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: stillwaterParts
        ),
    ],
    swiftLanguageModes: [.v6]
)
