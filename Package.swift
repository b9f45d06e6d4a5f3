// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

/// The commit the package is built from, for `toolhost --version`: SwiftPM reads it from git when the manifest is
/// evaluated (no git, or not a checkout: no definition, and the program says "unknown commit").
let buildCommitSettings: [CSetting] = {
  guard let git = Context.gitInformation else { return [] }
  return [
    .define("TOOLHOST_BUILD_COMMIT", to: "\"\(git.currentCommit)\""),
    .define("TOOLHOST_BUILD_UNCOMMITTED_CHANGES", to: git.hasUncommittedChanges ? "1" : "0"),
  ]
}()

/// The language's coming defaults, on for every module (as swift-subprocess and Hummingbird do): `any` spelled out
/// for existentials, members visible only from modules a file imports, and imports internal unless marked `public`.
let upcomingFeatures: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
  name: "toolhost",
  platforms: [.macOS(.v15)],
  products: [
    // Everything an application needs in one import: session, models, tools, the macros, plugins and MCP.
    .library(name: "Toolhost", targets: ["Toolhost"]),
    .library(name: "ToolhostCore", targets: ["ToolhostCore"]),
    .library(name: "ToolhostGeneration", targets: ["ToolhostGeneration"]),
    .library(name: "ToolhostJSON", targets: ["ToolhostJSON"]),
    .library(name: "ToolhostSchema", targets: ["ToolhostSchema"]),
    .library(name: "ToolhostSession", targets: ["ToolhostSession"]),
    .library(name: "ToolhostGuided", targets: ["ToolhostGuided"]),
    .library(name: "ToolhostOpenAI", targets: ["ToolhostOpenAI"]),
    .library(name: "ToolhostEventStream", targets: ["ToolhostEventStream"]),
    .library(name: "ToolhostMCP", targets: ["ToolhostMCP"]),
    .library(name: "ToolhostMCPHTTP", targets: ["ToolhostMCPHTTP"]),
    // Not part of `Toolhost`: an app that imports it links neither Hummingbird nor SQLite.
    .library(name: "ToolhostMCPHTTPServer", targets: ["ToolhostMCPHTTPServer"]),
    .library(name: "ToolhostWeb", targets: ["ToolhostWeb"]),
    .library(name: "ToolhostLocal", targets: ["ToolhostLocal"]),
    .library(name: "ToolhostCommandLine", targets: ["ToolhostCommandLine"]),
    .library(name: "ToolhostChat", targets: ["ToolhostChat"]),
    .library(name: "ToolhostHistory", targets: ["ToolhostHistory"]),
    .executable(name: "toolhost", targets: ["ToolhostCLI"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    // SHA-256 of trusted manifests (already built for async-http-client's TLS).
    .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    // The Streamable HTTP transport of `serve --mcp --http`; no optional traits (configuration files, full
    // Foundation), which toolhost does not use.
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    // The HTTP parts the chat page's connection gate reads (already built for Hummingbird).
    .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    // The chat history's SQLite database (on Debian's libsqlite3).
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    // The @Generable and @Guide macros (the compiler's own syntax library; 603 goes with Swift 6.3).
    .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
  ],
  targets: [
    // Debian's libjansson (pkg-config `jansson`), plus static-inline shims for its macros.
    .systemLibrary(
      name: "CJansson",
      pkgConfig: "jansson",
      providers: [.apt(["libjansson-dev"]), .brew(["jansson"])]
    ),
    // The `answers` eval's questions and checks (issue 30): pure code, built always so that its tests run with the
    // others; the benchmark that runs `toolhost ask` for it is ToolhostBench's.
    .target(name: "ToolhostEval", dependencies: ["ToolhostJSON"], swiftSettings: upcomingFeatures),
    // Small C helpers for system calls Swift cannot reach (variadic or macro-only), and the commit toolhost was
    // built from (`toolhost --version`).
    .target(name: "CToolhostSupport", cSettings: buildCommitSettings),
    // The only module that touches jansson: a Swift JSON value, parser and serializer.
    .target(name: "ToolhostJSON", dependencies: ["CJansson"], swiftSettings: upcomingFeatures),
    // JSON Schema validation for tool arguments.
    .target(name: "ToolhostSchema", dependencies: ["ToolhostJSON"], swiftSettings: upcomingFeatures),
    // The system layer under everything else: processes and their containment, file safety and file I/O, one-shot
    // values, line splitting, durations and display text. Only the C support below it.
    .target(name: "ToolhostSystem", dependencies: ["CToolhostSupport"], swiftSettings: upcomingFeatures),
    // The expansions of @Generable and @Guide: JSON Schema and GeneratedContent conversions derived from a type's
    // declaration, with diagnostics naming the property the macro cannot describe. A library of its own so that the
    // macro tests depend on it and not on the plugin: a test target that depends on a macro target makes SwiftPM build
    // the whole test product (and everything under it) a second time for the host, where the command line's
    // executable module cannot be imported by its tests.
    .target(
      name: "ToolhostMacroExpansion",
      dependencies: [
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
        .product(name: "SwiftDiagnostics", package: "swift-syntax"),
      ], swiftSettings: upcomingFeatures),
    // The compiler plugin behind @Generable and @Guide.
    .macro(
      name: "ToolhostMacros",
      dependencies: [
        "ToolhostMacroExpansion", .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
        .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
      ], swiftSettings: upcomingFeatures),
    // Guided generation's vocabulary (FoundationModels' names): `Generable`, `GenerationSchema`, `GeneratedContent`,
    // `GenerationGuide` and the macros that derive them from a Swift type.
    .target(
      name: "ToolhostGeneration", dependencies: ["ToolhostJSON", "ToolhostSchema", "ToolhostMacros"],
      swiftSettings: upcomingFeatures),
    // The tool vocabulary: `Tool`, `ToolRegistry`, `ToolCallError` and what a call carries.
    .target(
      name: "ToolhostTools", dependencies: ["ToolhostJSON", "ToolhostSchema", "ToolhostSystem", "ToolhostGeneration"],
      swiftSettings: upcomingFeatures),
    // Plugins: manifests, discovery, trust and approvals, and plugin tools run by the system layer's runner.
    .target(
      name: "ToolhostPlugins",
      dependencies: [
        "ToolhostJSON", "ToolhostSchema", "ToolhostSystem", "ToolhostTools",
        .product(name: "Crypto", package: "swift-crypto"),
      ], swiftSettings: upcomingFeatures),
    // The core a Swift program builds on: the tool vocabulary and plugins, with the system layer's public parts.
    .target(
      name: "ToolhostCore", dependencies: ["ToolhostSystem", "ToolhostTools", "ToolhostPlugins"],
      swiftSettings: upcomingFeatures),
    // The model protocol and the session loop (FoundationModels' LanguageModelSession shape).
    // `@SessionPropertyEntry` is one of ToolhostMacros' macros.
    .target(
      name: "ToolhostSession",
      dependencies: [
        "ToolhostJSON", "ToolhostSchema", "ToolhostSystem", "ToolhostTools", "ToolhostMacros",
      ], swiftSettings: upcomingFeatures),
    // The text/event-stream format, parsed as bytes arrive: for the HTTP clients (streamed chat completions, MCP's
    // Streamable HTTP).
    .target(name: "ToolhostEventStream", swiftSettings: upcomingFeatures),
    // Guided tool calling for small models, as pure functions: the prompt, the reply's schema and parsing, the review
    // of a reply (calls to ask again, answers to give up on), ranking the offered tools, answers from results.
    .target(name: "ToolhostGuided", dependencies: ["ToolhostJSON", "ToolhostSchema", "ToolhostTools", "ToolhostSession"], swiftSettings: upcomingFeatures),
    // OpenAI-compatible chat completions over HTTP.
    .target(
      name: "ToolhostOpenAI",
      dependencies: [
        "ToolhostJSON", "ToolhostSchema", "ToolhostSystem", "ToolhostSession", "ToolhostGuided", "ToolhostEventStream",
        .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ], swiftSettings: upcomingFeatures),
    // A local GGUF model: llama.cpp's server run and supervised by toolhost, with guided tool calls.
    .target(
      name: "ToolhostLocal",
      dependencies: [
        "ToolhostJSON", "ToolhostSystem", "ToolhostSession", "ToolhostGuided", "ToolhostOpenAI",
        .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ], swiftSettings: upcomingFeatures),
    // What `ask` and `chat` set up: the model a name chooses, the tools offered, the session and its policy.
    .target(name: "ToolhostChat", dependencies: [
        "ToolhostSystem", "ToolhostTools", "ToolhostPlugins", "ToolhostSession", "ToolhostOpenAI", "ToolhostLocal",
      ], swiftSettings: upcomingFeatures),
    // Chats kept between runs: a SQLite database of every chat's entries, titles, and the commands' queries.
    .target(
      name: "ToolhostHistory",
      dependencies: [
        "ToolhostJSON", "ToolhostSystem", "ToolhostTools", "ToolhostSession", "ToolhostChat",
        .product(name: "GRDB", package: "GRDB.swift"),
      ], swiftSettings: upcomingFeatures),
    // MCP both ways: MCP stdio servers as tools, and toolhost as an MCP server.
    .target(name: "ToolhostMCP", dependencies: [
        "CToolhostSupport", "ToolhostJSON", "ToolhostSchema", "ToolhostSystem", "ToolhostTools", "ToolhostPlugins",
      ], swiftSettings: upcomingFeatures),
    // MCP over Streamable HTTP, the client's half and the rules both halves share: remote MCP servers as tools, the
    // exchange's checks and the token file. No web server, so that `Toolhost` links none.
    .target(
      name: "ToolhostMCPHTTP",
      dependencies: [
        "ToolhostJSON", "ToolhostSystem", "ToolhostPlugins", "ToolhostMCP", "ToolhostEventStream",
        .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
      ], swiftSettings: upcomingFeatures),
    // toolhost as an MCP server over Streamable HTTP (`toolhost serve --http`), on Hummingbird.
    .target(
      name: "ToolhostMCPHTTPServer",
      dependencies: [
        "ToolhostJSON", "ToolhostSystem", "ToolhostPlugins", "ToolhostMCP", "ToolhostMCPHTTP",
        .product(name: "Hummingbird", package: "hummingbird"),
        // Its HTTP/1 channel's idle timeout and the cap on open connections.
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Logging", package: "swift-log"),
      ], swiftSettings: upcomingFeatures),
    // The chat page (`toolhost chat --web`): its server, API and event stream over the terminal chat's session,
    // history and approvals, and the page itself (Resources/, embedded by scripts/embed-page).
    .target(
      name: "ToolhostWeb",
      dependencies: [
        "ToolhostJSON", "ToolhostSystem", "ToolhostTools", "ToolhostPlugins", "ToolhostSession", "ToolhostChat",
        "ToolhostHistory",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Logging", package: "swift-log"),
      ], exclude: ["Resources"], swiftSettings: upcomingFeatures),
    // The one import of an application (FoundationModels code changes `import FoundationModels` to this): it
    // re-exports the core, guided generation and its macros, the session, the models, the chat set-up and MCP's
    // clients and stdio server. Not the chat history (SQLite), the chat page or the MCP HTTP server (Hummingbird):
    // their names and their dependencies' would take part in type-checking an app's own code.
    .target(
      name: "Toolhost",
      dependencies: [
        "ToolhostCore", "ToolhostJSON", "ToolhostSchema", "ToolhostGeneration", "ToolhostSession", "ToolhostOpenAI",
        "ToolhostLocal", "ToolhostChat", "ToolhostMCP", "ToolhostMCPHTTP",
      ], swiftSettings: upcomingFeatures),
    // What a command-line front end shows and reads: flags from a tool's schema, reports and tables, `batch` lines,
    // exit statuses, signals turned into cancellation.
    .target(name: "ToolhostCommandLine", dependencies: [
        "ToolhostJSON", "ToolhostSchema", "ToolhostSystem", "ToolhostTools", "ToolhostPlugins",
      ], swiftSettings: upcomingFeatures),
    // The command-line program: thin, all logic lives in the libraries.
    .executableTarget(
      name: "ToolhostCLI",
      dependencies: [
        "ToolhostJSON", "ToolhostSystem", "ToolhostTools", "ToolhostPlugins", "ToolhostSession", "ToolhostOpenAI",
        "ToolhostMCP", "ToolhostMCPHTTP", "ToolhostMCPHTTPServer", "ToolhostLocal", "ToolhostChat", "ToolhostCommandLine",
        "ToolhostHistory",
        "ToolhostWeb", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
      ], swiftSettings: upcomingFeatures),
    // The example assistant (Examples/Assistant, also a package of its own): FoundationModels-style tools, the default
    // model and the plugin folder; built with the rest so that a test can run it.
    .executableTarget(
      name: "ToolhostExampleAssistant", dependencies: ["Toolhost"], path: "Examples/Assistant/Sources/Assistant",
      swiftSettings: upcomingFeatures),
    // The samples of FoundationModels 27's documentation (tool calling, tool-calling modes, dynamic profiles,
    // errors, the transcript), unchanged but for the import, with the app's own stand-ins: built as an app is (no
    // upcoming features), type-checked in Swift 5 and 6 modes by a test, and run against the local model by another.
    .executableTarget(
      name: "ToolhostAppleSamples", dependencies: ["Toolhost"], path: "Examples/AppleSamples/Sources/AppleSamples"),
    // Every Swift snippet of README.md and docs/*.md, one file each, compiled with the rest so that none can rot
    // (ToolhostTests' DocSnippetTests checks that each page shows its snippet as it is here); built, never run.
    .executableTarget(
      name: "ToolhostSnippets",
      dependencies: [
        "Toolhost", "ToolhostCore", "ToolhostSession", "ToolhostOpenAI", "ToolhostLocal", "ToolhostHistory",
        "ToolhostWeb",
      ], path: "Examples/Snippets", swiftSettings: upcomingFeatures),
    // What several test targets need: paths, the built binary and its one driver, temporary folders and plugin
    // folders, running and checking processes, fakellm, the scripted model, a Swift tool (used only by tests; every
    // test target depends on it). Peers/ holds the Python scripts that run and check fakellm.
    .target(
      name: "ToolhostTestSupport",
      dependencies: ["ToolhostCore", "ToolhostGeneration", "ToolhostJSON", "ToolhostSession"],
      path: "Tests/ToolhostTestSupport",
      exclude: ["Peers"], swiftSettings: upcomingFeatures),
    // Each test target depends on what its files import.
    // The macros' expansions and diagnostics, checked on source text (swift-syntax's own test support).
    .testTarget(
      name: "ToolhostMacrosTests",
      dependencies: [
        "ToolhostMacroExpansion", .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
      ], swiftSettings: upcomingFeatures),
    // FoundationModels code with its import changed to `import Toolhost`, compiled and run against fakellm.
    .testTarget(
      name: "ToolhostFoundationModelsTests", dependencies: ["Toolhost", "ToolhostTestSupport"],
      swiftSettings: upcomingFeatures),
    // Guided generation's types, with schemas derived by the macros and checked by the validator.
    .testTarget(
      name: "ToolhostGenerationTests",
      dependencies: ["ToolhostGeneration", "ToolhostJSON", "ToolhostSchema", "ToolhostTestSupport"],
      swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostJSONTests", dependencies: ["ToolhostJSON", "ToolhostTestSupport"], swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostSchemaTests", dependencies: ["ToolhostSchema", "ToolhostJSON", "ToolhostTestSupport"],
      exclude: ["Differential"], swiftSettings: upcomingFeatures),
    // The system layer: the runner, its children and line splitting.
    .testTarget(
      name: "ToolhostSystemTests", dependencies: ["ToolhostSystem", "CToolhostSupport", "ToolhostTestSupport"],
      swiftSettings: upcomingFeatures),
    // The tool vocabulary and plugins: tool calls, names, discovery, trust, approvals, and containment as plugins
    // get it.
    .testTarget(
      name: "ToolhostTests",
      dependencies: [
        "ToolhostSystem", "ToolhostTools", "ToolhostPlugins", "ToolhostCore", "ToolhostJSON", "ToolhostSchema",
        "ToolhostTestSupport",
      ], swiftSettings: upcomingFeatures),
    // ToolhostCLI too: the command line is parsed in process (ToolhostCommand.parseAsRoot). The tests of `ask`,
    // `chat`, `chats` and approvals run the binary against fakellm.
    .testTarget(
      name: "ToolhostCLITests",
      dependencies: [
        "ToolhostCore", "ToolhostCLI", "ToolhostCommandLine", "ToolhostJSON", "ToolhostOpenAI", "ToolhostSystem",
        "ToolhostTestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      exclude: ["Hostile", "Escape"], swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostSessionTests",
      dependencies: [
        "ToolhostCore", "ToolhostGeneration", "ToolhostGuided", "ToolhostSession", "ToolhostOpenAI", "ToolhostEventStream", "ToolhostJSON", "ToolhostSchema",
        "ToolhostChat", "ToolhostTestSupport",
      ], swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostMCPTests",
      dependencies: [
        "ToolhostCore", "ToolhostMCP", "ToolhostMCPHTTP", "ToolhostMCPHTTPServer", "ToolhostJSON", "ToolhostTestSupport",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ], swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostEvalTests",
      dependencies: ["ToolhostEval", "ToolhostJSON", "ToolhostSchema", "ToolhostCore", "ToolhostTestSupport"],
      swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostChatTests",
      dependencies: [
        "ToolhostCore", "ToolhostChat", "ToolhostSession", "ToolhostOpenAI", "ToolhostLocal", "ToolhostJSON",
        "ToolhostTestSupport",
      ], swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostWebTests",
      dependencies: [
        "ToolhostCore", "ToolhostWeb", "ToolhostHistory", "ToolhostChat", "ToolhostSession", "ToolhostOpenAI",
        "ToolhostLocal", "ToolhostJSON", "ToolhostSchema", "ToolhostTestSupport",
      ], swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostHistoryTests",
      dependencies: ["ToolhostCore", "ToolhostHistory", "ToolhostSession", "ToolhostJSON", "ToolhostTestSupport"],
      swiftSettings: upcomingFeatures),
    .testTarget(
      name: "ToolhostLocalTests",
      dependencies: ["ToolhostLocal", "ToolhostGeneration", "ToolhostCore", "ToolhostOpenAI", "ToolhostSession", "ToolhostJSON", "ToolhostTestSupport"],
      swiftSettings: upcomingFeatures),
    // The guided strategy, without a model: pure checks, and the OpenAI client's guided requests against a scripted
    // server.
    .testTarget(
      name: "ToolhostGuidedTests",
      dependencies: [
        "ToolhostGuided", "ToolhostOpenAI", "ToolhostSession", "ToolhostJSON", "ToolhostTestSupport",
      ], exclude: ["Support"], swiftSettings: upcomingFeatures),
  ],
  swiftLanguageModes: [.v6]
)

// The benchmarks are built only when asked, so that `swift build` and `swift test` do not compile them:
// `TOOLHOST_BENCHMARKS=1 swift run -c release ToolhostBench` (BENCHMARKS.md).
if Context.environment["TOOLHOST_BENCHMARKS"] != nil {
  package.targets += [
    // The C floor the runner benchmark compares against.
    .target(name: "CBenchBaseline"),
    .executableTarget(
      name: "ToolhostBench",
      dependencies: [
        "ToolhostJSON", "ToolhostSchema", "ToolhostSystem", "ToolhostTools", "ToolhostPlugins", "ToolhostSession",
        "ToolhostOpenAI", "ToolhostMCP", "ToolhostMCPHTTP", "ToolhostMCPHTTPServer", "ToolhostLocal", "ToolhostEval",
        "ToolhostHistory",
        "CToolhostSupport", "CBenchBaseline", .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ], swiftSettings: upcomingFeatures
    ),
  ]
}
