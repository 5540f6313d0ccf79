// swift-tools-version: 6.1
import PackageDescription

/// `TODO_FUZZ=1 swift build --product todo-fuzz --scratch-path .build-fuzz` builds the todo file reader and
/// its fuzz target with libFuzzer and AddressSanitizer (Playgrounds/Todo/Fuzz says how to run it). The
/// flags go on those targets only, never on the build tools; users never set the variable.
let fuzzing = Context.environment["TODO_FUZZ"] == "1"
let fuzzFlags: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"]), .define("FUZZING")] : []
let fuzzLinking: [LinkerSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []

let package = Package(
    name: "Stillwater",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Stillwater", targets: ["Stillwater"]),
        .library(name: "StillwaterTesting", targets: ["StillwaterTesting"]),
        .library(name: "StillwaterLive", targets: ["StillwaterLive"]),
        // Empty unless the package is added with its trait: `traits: ["Hummingbird"]`, `traits: ["Postgres"]`.
        .library(name: "StillwaterHummingbird", targets: ["StillwaterHummingbird"]),
        .library(name: "StillwaterPostgres", targets: ["StillwaterPostgres"]),
        .executable(name: "basics", targets: ["Basics"]),
        .executable(name: "counter", targets: ["Counter"]),
        .executable(name: "action-handles", targets: ["ActionHandles"]),
        .executable(name: "view-model-binding", targets: ["ViewModelBinding"]),
        .executable(name: "child-features", targets: ["ChildFeatures"]),
        .executable(name: "todo", targets: ["Todo"]),
        .executable(name: "todo-fuzz", targets: ["TodoFuzz"]),
        .executable(name: "journal-restart", targets: ["JournalRestart"]),
    ],
    // Off by default: without them the package resolves, fetches and builds no dependency at all.
    traits: [
        .trait(name: "Hummingbird", description: "StillwaterHummingbird: serve a LiveHub over WebSockets on a Hummingbird 2 router."),
        .trait(name: "Postgres", description: "StillwaterPostgres: an ActionLog in PostgreSQL, for several servers on one log."),
    ],
    // Used only by the targets of the traits above; a build without those traits does not fetch them.
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
    ],
    targets: [
        // The engine article (Internal/README.md) is for contributors; it is not part of the module.
        .target(name: "Stillwater", exclude: ["Internal/README.md"]),
        .target(name: "StillwaterTesting", dependencies: ["Stillwater", "StillwaterLive"]),
        // A store served live: the protocol without sockets. The contributors' notes (README.md) are not
        // part of the module.
        .target(name: "StillwaterLive", dependencies: ["Stillwater"], exclude: ["README.md"]),
        // A LiveHub on Hummingbird 2: WebSocket upgrade, access, timeouts, drain; serves the JavaScript client.
        .target(
            name: "StillwaterHummingbird",
            dependencies: [
                "StillwaterLive",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Hummingbird"])),
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(traits: ["Hummingbird"])),
                // LiveTelemetry: the live library's events as logs, metrics and spans. Hummingbird 2 already
                // depends on all three API packages, so the trait fetches nothing more for them.
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Hummingbird"])),
            ],
            resources: [.copy("Resources")]
        ),
        // An ActionLog in PostgreSQL (postgres-nio), shared by several servers.
        .target(
            name: "StillwaterPostgres",
            dependencies: [
                "Stillwater", "StillwaterLive",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Postgres"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Postgres"])),
            ]
        ),
        .executableTarget(name: "Basics", dependencies: ["Stillwater"], path: "Playgrounds/Basics"),
        .executableTarget(name: "Counter", dependencies: ["Stillwater"], path: "Playgrounds/Counter"),
        .executableTarget(name: "ActionHandles", dependencies: ["Stillwater"], path: "Playgrounds/ActionHandles"),
        .executableTarget(
            name: "ViewModelBinding", dependencies: ["Stillwater"], path: "Playgrounds/ViewModelBinding"),
        .executableTarget(name: "ChildFeatures", dependencies: ["Stillwater"], path: "Playgrounds/ChildFeatures"),
        .executableTarget(name: "JournalRestart", dependencies: ["Stillwater"], path: "Playgrounds/JournalRestart"),
        .target(name: "TodoCore", dependencies: ["Stillwater"], path: "Playgrounds/Todo/TodoCore", swiftSettings: fuzzFlags),
        .executableTarget(name: "Todo", dependencies: ["TodoCore", "Stillwater"], path: "Playgrounds/Todo/App"),
        .executableTarget(
            name: "TodoFuzz", dependencies: ["TodoCore"], path: "Playgrounds/Todo/Fuzz",
            swiftSettings: fuzzFlags, linkerSettings: fuzzLinking),
        .testTarget(name: "StillwaterTests", dependencies: ["Stillwater", "StillwaterTesting"]),
        .testTarget(name: "StillwaterLiveTests", dependencies: ["StillwaterLive", "Stillwater", "StillwaterTesting"]),
        // The adapter's and the PostgreSQL log's tests: empty without the traits, like their targets.
        .testTarget(
            name: "StillwaterHummingbirdTests",
            dependencies: [
                "StillwaterHummingbird", "StillwaterLive", "Stillwater",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Hummingbird"])),
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Hummingbird"])),
            ]
        ),
        .testTarget(
            name: "StillwaterPostgresTests",
            dependencies: [
                "StillwaterPostgres", "StillwaterLive", "Stillwater", "StillwaterTesting",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
            ]
        ),
        .testTarget(name: "TodoTests", dependencies: ["TodoCore", "Todo", "Stillwater", "StillwaterTesting"], exclude: ["FuzzCorpus"]),
        // The README and DocC examples, and the doc comment examples of the modules DocExampleTests depends
        // on, compiled and run as tests (Tests/DocExampleTests/README.md).
        .target(name: "DocBlockKit", path: "Tools/DocBlockKit"),
        .executableTarget(name: "DocBlockExtractor", dependencies: ["DocBlockKit"], path: "Tools/DocBlockExtractor"),
        .plugin(name: "DocBlockPlugin", capability: .buildTool(), dependencies: ["DocBlockExtractor"]),
        .testTarget(
            name: "DocExampleTests",
            dependencies: ["Stillwater", "StillwaterTesting", "StillwaterLive", "TodoCore", "DocBlockKit"],
            exclude: ["README.md", "Fixtures"],
            // A block's file sees only what it imports: no member of a module it does not import either.
            swiftSettings: [.enableUpcomingFeature("MemberImportVisibility")],
            plugins: ["DocBlockPlugin"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Documentation only: with STILLWATER_DOCS=1 in the environment the package also depends on the Swift-DocC
// plugin, so `swift package generate-documentation` works. Without it (how users and ordinary builds see
// the package) Stillwater has no dependencies at all. `.ci/run` builds the documentation site this way:
//
//     STILLWATER_DOCS=1 swift package --scratch-path .build-docs --allow-writing-to-directory .build-docs/site \
//         generate-documentation --target Stillwater --target StillwaterTesting --target StillwaterLive --warnings-as-errors \
//         --enable-experimental-combined-documentation --transform-for-static-hosting --output-path .build-docs/site
if Context.environment["STILLWATER_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
