// swift-tools-version: 6.1
import PackageDescription

/// A journal of a store's actions in PostgreSQL, shared by several processes: each board's actions in one
/// table in an order the database assigns, client-chosen command ids kept unique, a notification on every
/// append, snapshots in a second table; each log is also the library's `ActionLog`. Its own package (on postgres-nio), so the Stillwater library stays
/// dependency-free.
let package = Package(
    name: "PostgresJournal",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PostgresJournal", targets: ["PostgresJournal"]),
    ],
    dependencies: [
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(name: "Stillwater", path: "../../.."),
    ],
    targets: [
        .target(
            name: "PostgresJournal",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Stillwater", package: "Stillwater"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
