import Crypto
public import Foundation
import ToolhostJSON
import ToolhostSystem

/// The project plugin folders the user trusts, each with the SHA-256 of every manifest it had when trusted (like
/// `direnv allow`): a manifest that changed, or was added, since then is not loaded until the folder is trusted again.
///
/// Kept in `trust.json` in toolhost's configuration folder, mode 0600.
///
/// ```swift
/// var store = try TrustStore.load()
/// let record = try store.trust(folder: "/home/me/src/app/plugins")   // reads the manifests, starts nothing
/// store.verdict(manifest: path, bytes: bytes, folder: folder)         // .trusted, .changed, .added or .untrusted
/// ```
public struct TrustStore: Sendable {
  /// One trusted folder.
  public struct Record: Sendable, Equatable {
    /// The folder's absolute path.
    public var folder: String
    /// When it was trusted (ISO 8601).
    public var trustedAt: String
    /// Each manifest's path relative to the folder → the SHA-256 of its bytes, in hex.
    public var manifests: [String: String]
  }

  /// What the store says of one manifest.
  public enum Verdict: Sendable, Equatable {
    /// The folder is trusted and the manifest is as it was.
    case trusted
    /// The folder is trusted, but the manifest changed since.
    case changed
    /// The folder is trusted, but the manifest was added since.
    case added
    /// The folder is not trusted.
    case untrusted
  }

  /// The file (`trust.json`).
  public var path: String
  /// The trusted folders by path.
  public private(set) var records: [String: Record] = [:]

  /// An empty store that would be written to `path`.
  public init(path: String) {
    self.path = path
  }

  /// Reads `trust.json` from toolhost's configuration folder; a missing file trusts nothing.
  ///
  /// - Throws: ``ConfigurationError`` when the file cannot be read or is not a trust file, or another user could
  ///   change it.
  public static func load(environment: [String: String] = ProcessInfo.processInfo.environment)
    throws(ConfigurationError) -> TrustStore
  {
    let path = (UserConfiguration.folder(environment: environment) as NSString).appendingPathComponent("trust.json")
    var store = TrustStore(path: path)
    guard FileManager.default.fileExists(atPath: path) else { return store }
    let value: JSONValue
    do {
      value = try JSONValue.parse(try FileSafety.readRegularFile(path, limit: 16 << 20, user: getuid()))
    } catch {
      throw ConfigurationError(path: path, message: "\(error) (remove the file to trust nothing, then trust again)")
    }
    for (folder, entry) in value["folders"]?.objectValue ?? [:] {
      var manifests: [String: String] = [:]
      for (name, digest) in entry["manifests"]?.objectValue ?? [:] {
        if let d = digest.stringValue { manifests[name] = d }
      }
      store.records[folder] = Record(
        folder: folder, trustedAt: entry["trustedAt"]?.stringValue ?? "", manifests: manifests)
    }
    return store
  }

  /// The SHA-256 of `bytes`, in lowercase hex.
  public static func digest(_ bytes: [UInt8]) -> String {
    SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
  }

  /// The record of `folder`, if it is trusted.
  public func record(for folder: String) -> Record? { records[folder] }

  /// What the store says of the manifest at `manifest` (in `folder`) whose bytes are `bytes`.
  public func verdict(manifest: String, bytes: [UInt8], folder: String) -> Verdict {
    guard let record = records[folder] else { return .untrusted }
    guard let expected = record.manifests[Self.relative(manifest, to: folder)] else { return .added }
    return expected == Self.digest(bytes) ? .trusted : .changed
  }

  /// Trusts `folder` as it is now: reads each manifest (nothing is started) and records its digest, replacing an
  /// earlier record. Does not write the file; ``save()`` does.
  ///
  /// - Returns: the record, and the manifests that could not be read (they are left out, so they stay untrusted).
  @discardableResult
  public mutating func trust(folder: String, now: Date = Date()) -> (Record, [(path: String, problem: String)]) {
    var contents: [(String, [UInt8])] = []
    var unreadable: [(String, String)] = []
    for path in PluginCatalog.manifests(in: folder) {
      do { contents.append((path, try FileSafety.readRegularFile(path, user: nil))) } catch {
        unreadable.append((path, error.description))
      }
    }
    return (trust(folder: folder, contents: contents, now: now), unreadable)
  }

  /// Trusts `folder` with these manifest contents (the bytes the user was shown), replacing an earlier record.
  /// Does not write the file; ``save()`` does.
  @discardableResult
  public mutating func trust(folder: String, contents: [(path: String, bytes: [UInt8])], now: Date = Date()) -> Record {
    var manifests: [String: String] = [:]
    for (path, bytes) in contents { manifests[Self.relative(path, to: folder)] = Self.digest(bytes) }
    let record = Record(folder: folder, trustedAt: ISO8601DateFormatter().string(from: now), manifests: manifests)
    records[folder] = record
    return record
  }

  /// How `record`'s folder differs from when it was trusted: manifests changed, added and removed since (relative
  /// paths), or `nil` when the folder is gone.
  public func changes(of record: Record) -> (changed: [String], added: [String], removed: [String])? {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: record.folder, isDirectory: &isDirectory), isDirectory.boolValue
    else { return nil }
    var changed: [String] = []
    var added: [String] = []
    var present = Set<String>()
    for path in PluginCatalog.manifests(in: record.folder) {
      let name = Self.relative(path, to: record.folder)
      present.insert(name)
      guard let expected = record.manifests[name] else {
        added.append(name)
        continue
      }
      let bytes = try? FileSafety.readRegularFile(path, user: nil)
      if bytes.map(Self.digest) != expected { changed.append(name) }
    }
    return (changed, added, record.manifests.keys.filter { !present.contains($0) }.sorted())
  }

  /// Forgets `folder`; returns whether it was trusted.
  @discardableResult
  public mutating func revoke(folder: String) -> Bool {
    records.removeValue(forKey: folder) != nil
  }

  /// Writes the store (mode 0600 when new, its mode kept otherwise), making the folder (0700) if needed.
  ///
  /// - Throws: ``ConfigurationError`` when it cannot be written.
  public func save() throws(ConfigurationError) {
    var folders = JSONObject()
    for folder in records.keys.sorted() {
      let r = records[folder]!
      var manifests = JSONObject()
      for name in r.manifests.keys.sorted() { manifests[name] = .string(r.manifests[name]!) }
      folders[folder] = ["trustedAt": .string(r.trustedAt), "manifests": .object(manifests)]
    }
    let document: JSONValue = ["version": 1, "folders": .object(folders)]
    do {
      try FileSafety.makePrivateFolder((path as NSString).deletingLastPathComponent)
      try FileSafety.writeSecretFile(path, Array((try document.serialized(.pretty) + "\n").utf8))
    } catch {
      throw ConfigurationError(path: path, message: "cannot write the file: \(error.localizedDescription)")
    }
  }

  static func relative(_ path: String, to folder: String) -> String {
    let prefix = folder.hasSuffix("/") ? folder : folder + "/"
    return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
  }
}
