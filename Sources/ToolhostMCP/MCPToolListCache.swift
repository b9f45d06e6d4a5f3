public import Foundation
import ToolhostJSON
public import ToolhostPlugins
import ToolhostSystem

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// MCP servers' tool lists kept between runs, so that commands which only show or look up tools (`list`,
/// `describe`, `call` of a plugin's tool) start no server while a list is fresh.
///
/// One file per server in ``directory`` (mode 0600, in a 0700 folder), named by a digest of what decides the list:
/// the manifest's bytes and the server executable's path and file identity (device, inode, size, modification
/// time). Editing the manifest or reinstalling the server makes a new key, so the old list is never used for it.
/// A list is fresh for the manifest's `toolListTTL` when it sets one, else for the server's own `ttlMs` (0, never,
/// for servers before MCP 2026-07-28 and for the SDK's defaults). A file that is not the user's own, or not a
/// regular file, or not readable as a list, is ignored. Reading and writing never throw: a cache that cannot be
/// used only means the server is started.
///
/// ```swift
/// let loader = MCPPlugins.Loader(cache: MCPToolListCache.standard(environment: ProcessInfo.processInfo.environment))
/// ```
public struct MCPToolListCache: Sendable {
  /// The folder of the lists.
  public let directory: String

  /// A cache in `directory`.
  public init(directory: String) {
    self.directory = directory
  }

  /// The user's cache: `$XDG_CACHE_HOME/toolhost/mcp-tools`, else `~/.cache/toolhost/mcp-tools`; `nil` without a
  /// home. A relative `XDG_CACHE_HOME` is ignored, as the XDG specification says.
  public static func standard(environment: [String: String]) -> MCPToolListCache? {
    if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
      return MCPToolListCache(directory: base + "/toolhost/mcp-tools")
    }
    guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
    return MCPToolListCache(directory: home + "/.cache/toolhost/mcp-tools")
  }

  /// The file that holds `server`'s list, or `nil` when its manifest or executable cannot be read, or it is a
  /// remote server (whose list is always asked for).
  public func path(for server: PluginServer) -> String? {
    guard let manifest = try? FileSafety.readRegularFile(server.manifest.path, user: nil),
      let executable = server.executable, let file = FileSafety.identity(of: executable)
    else { return nil }
    let identity = "\(executable)\u{0}\(file)\u{0}\(server.manifest.path)\u{0}"
    return directory + "/" + TrustStore.digest(Array(identity.utf8) + manifest) + ".json"
  }

  /// `server`'s list when one is kept and still fresh at `now`.
  public func fresh(for server: PluginServer, now: Date = Date()) -> MCPToolList? {
    guard let path = path(for: server),
      let bytes = try? FileSafety.readRegularFile(path, limit: 16 << 20, user: getuid()),
      let entry = try? JSONValue.parse(bytes),
      let fetched = entry["fetchedAt"]?.doubleValue, let ttl = entry["ttlMs"]?.integerValue,
      let tools = entry["tools"]?.arrayValue
    else { return nil }
    let lifetime = server.manifest.mcp?.toolListTTL.map { $0 * 1000 } ?? Double(ttl)
    let age = now.timeIntervalSince1970 * 1000 - fetched
    guard age >= 0, age < lifetime else { return nil }
    var infos: [MCPToolInfo] = []
    for tool in tools {
      guard let info = try? MCPToolInfo(json: tool) else { return nil }
      infos.append(info)
    }
    return MCPToolList(tools: infos, ttlMilliseconds: ttl)
  }

  /// Keeps `list`, received at `now`, for `server` (replacing what was kept). Does not throw: a list that cannot be
  /// written is not kept.
  public func store(_ list: MCPToolList, for server: PluginServer, now: Date = Date()) {
    guard let path = path(for: server), let executable = server.executable else { return }
    let entry: JSONValue = [
      "manifest": .string(server.manifest.path), "executable": .string(executable),
      "fetchedAt": .real((now.timeIntervalSince1970 * 1000).rounded()), "ttlMs": .integer(list.ttlMilliseconds),
      "tools": .array(list.tools.map(\.json)),
    ]
    do {
      try FileSafety.makePrivateFolder(directory)
      try FileSafety.writeSecretFile(path, Array(entry.serialized().utf8))
    } catch {
      return
    }
  }

  /// Forgets `server`'s list. Does not throw.
  public func remove(for server: PluginServer) {
    if let path = path(for: server) { unlink(path) }
  }
}
