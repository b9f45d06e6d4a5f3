import Foundation
import ToolhostJSON
import ToolhostSchema
import ToolhostSystem

/// The schema files a plugin ships beside its manifest: a tool's schema may refer to them (`"$ref":
/// "common.schema.json#/$defs/Person"`), relative to the manifest.
///
/// A reference resolves against the manifest's `file://` URL; a file it names is read only when it lies in the
/// manifest's folder or below it (after resolving symbolic links), is a regular JSON file of at most 1 MiB, and, with
/// StrictModes, is the user's or root's and writable by no one else. Nothing is ever fetched over the network: any
/// other URI is an unresolved reference that says so.
enum PluginSchemaFiles {
  /// The schema options for the tools of the manifest at `manifestPath`; `user` is the owner files must have
  /// (StrictModes), `nil` for no ownership check. Does not throw.
  static func options(manifestPath: String, user: uid_t?) -> SchemaOptions {
    // Discovery makes these for every manifest: plain string work, no Foundation URL.
    let slash = manifestPath.utf8.lastIndex(of: UInt8(ascii: "/"))
    let folder = slash.map { String(manifestPath[..<$0]) } ?? "."
    let registry = SchemaRegistry { uri throws(SchemaFileError) in
      try load(uri, folder: folder.isEmpty ? "/" : folder, user: user)
    }
    return SchemaOptions(baseURI: fileURI(manifestPath), registry: registry)
  }

  /// `file://` and the absolute path, percent-encoding every byte but letters, digits, `-._~` and `/`.
  static func fileURI(_ path: String) -> String {
    let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    var bytes = Array("file://".utf8)
    let hex = Array("0123456789ABCDEF".utf8)
    for byte in absolute.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
        UInt8(ascii: "~"), UInt8(ascii: "/"):
        bytes.append(byte)
      default:
        bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Reads the schema file a `file://` URI names, if it is one the plugin may ship; `nil` for other URIs.
  private static func load(_ uri: String, folder: String, user: uid_t?) throws(SchemaFileError) -> JSONValue? {
    guard uri.hasPrefix("file:"), let url = URL(string: uri), url.isFileURL else { return nil }
    let path = url.path
    guard let real = realpath(path, nil) else {
      throw SchemaFileError(description: "\(path) does not exist beside the manifest")
    }
    let resolved = String(cString: real)
    free(real)
    let root = (realpath(folder, nil)).map { pointer in
      defer { free(pointer) }
      return String(cString: pointer)
    }
    guard let root, resolved.hasPrefix(root == "/" ? "/" : root + "/") else {
      throw SchemaFileError(
        description: "\(path) is outside the plugin's folder \(folder); a plugin's schemas must be in its folder")
    }
    let bytes: [UInt8]
    do { bytes = try FileSafety.readRegularFile(resolved, user: user) } catch {
      throw SchemaFileError(description: "\(path): \(error.description)")
    }
    do {
      return try JSONValue.parse(bytes)
    } catch {
      throw SchemaFileError(description: "\(path) is not valid JSON: \(error)")
    }
  }
}

/// Why a schema file a tool's schema refers to cannot be used.
struct SchemaFileError: Error, CustomStringConvertible {
  var description: String
}
