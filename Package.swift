// swift-tools-version:6.1
import PackageDescription

let package = Package(
  name: "toolhost",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Toolhost", targets: ["Toolhost"]),
    .library(name: "ToolhostJSON", targets: ["ToolhostJSON"]),
    .library(name: "ToolhostSchema", targets: ["ToolhostSchema"]),
    .executable(name: "toolhost", targets: ["ToolhostCLI"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
  ],
  targets: [
    // Debian's libjansson (pkg-config `jansson`), plus static-inline shims for its macros.
    .systemLibrary(
      name: "CJansson",
      pkgConfig: "jansson",
      providers: [.apt(["libjansson-dev"]), .brew(["jansson"])]
    ),
    // Small C helpers for system calls Swift cannot reach (variadic or macro-only).
    .target(name: "CToolhostSupport"),
    // The only module that touches jansson: a Swift JSON value, parser and serializer.
    .target(name: "ToolhostJSON", dependencies: ["CJansson"]),
    // JSON Schema validation for tool arguments.
    .target(name: "ToolhostSchema", dependencies: ["ToolhostJSON"]),
    // Manifests, discovery, tools, the subprocess runner and errors.
    .target(name: "Toolhost", dependencies: ["ToolhostJSON", "ToolhostSchema", "CToolhostSupport"]),
    // The command-line program: thin, all logic lives in the libraries.
    .executableTarget(
      name: "ToolhostCLI",
      dependencies: ["Toolhost", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    .executableTarget(name: "ToolhostBench", dependencies: ["Toolhost", "CToolhostSupport"]),
    .testTarget(name: "ToolhostJSONTests", dependencies: ["ToolhostJSON"]),
    .testTarget(name: "ToolhostSchemaTests", dependencies: ["ToolhostSchema"]),
    .testTarget(name: "ToolhostTests", dependencies: ["Toolhost"]),
    .testTarget(name: "ToolhostCLITests", dependencies: ["Toolhost"]),
  ],
  swiftLanguageModes: [.v6]
)
