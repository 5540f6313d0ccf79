// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Stillwater",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Stillwater", targets: ["Stillwater"]),
        .library(name: "StillwaterTesting", targets: ["StillwaterTesting"]),
        .executable(name: "basics", targets: ["Basics"]),
        .executable(name: "counter", targets: ["Counter"]),
        .executable(name: "action-handles", targets: ["ActionHandles"]),
    ],
    targets: [
        .target(name: "Stillwater"),
        .target(name: "StillwaterTesting", dependencies: ["Stillwater"]),
        .executableTarget(name: "Basics", dependencies: ["Stillwater"], path: "Playgrounds/Basics"),
        .executableTarget(name: "Counter", dependencies: ["Stillwater"], path: "Playgrounds/Counter"),
        .executableTarget(name: "ActionHandles", dependencies: ["Stillwater"], path: "Playgrounds/ActionHandles"),
        .testTarget(name: "StillwaterTests", dependencies: ["Stillwater", "StillwaterTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
