// swift-tools-version: 6.1
import PackageDescription

/// The differential conformance check: seeded random event scripts run through the same operator chains
/// in Stillwater and in OpenCombine, and what each subscriber received compared. A package of its own,
/// like `Benchmarks/`, so OpenCombine never becomes a dependency of the library.
let package = Package(
    name: "StillwaterConformance",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "conformance", targets: ["conformance"]),
    ],
    dependencies: [
        .package(name: "Stillwater", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .target(
            name: "ConformanceKit",
            dependencies: [
                .product(name: "Stillwater", package: "Stillwater"),
                .product(name: "StillwaterTesting", package: "Stillwater"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        .executableTarget(name: "conformance", dependencies: ["ConformanceKit"]),
        .testTarget(name: "ConformanceKitTests", dependencies: ["ConformanceKit"]),
    ],
    swiftLanguageModes: [.v6]
)
