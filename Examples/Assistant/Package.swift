// swift-tools-version:6.1
// The example assistant as a package of its own, as an application would depend on toolhost. toolhost's own build
// also builds it (as the target ToolhostExampleAssistant), and a test runs it against the local model.
import PackageDescription

let package = Package(
  name: "Assistant",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "toolhost", path: "../..")],
  targets: [
    .executableTarget(
      name: "Assistant", dependencies: [.product(name: "Toolhost", package: "toolhost")],
      swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")])
  ],
  swiftLanguageModes: [.v6]
)
