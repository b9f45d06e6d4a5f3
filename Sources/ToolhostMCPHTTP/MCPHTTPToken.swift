public import Foundation
import ToolhostSystem

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The bearer token of an HTTP server that the user did not choose one for: made fresh for each run and kept in a
/// file only the user can read (as Jupyter does), so that other accounts on the machine cannot call the tools.
///
/// ```swift
/// let token = MCPHTTPToken.generate()
/// let options = MCPHTTPServer.Options(
///   port: 0, exchange: MCPHTTPExchange(bearerToken: token), tokenFolder: MCPHTTPToken.defaultFolder())
/// // run(onListening:) writes serve-PORT.token in that folder once it listens, and removes it when it stops.
/// ```
public enum MCPHTTPToken {
  /// Why a token file could not be made.
  public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, with the path.
    public var description: String
  }

  /// A fresh token: 32 bytes from the system's secure random source (`getrandom` on Linux), as 64 hex digits.
  public static func generate() -> String {
    var generator = SystemRandomNumberGenerator()
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(64)
    for _ in 0..<32 {
      let byte = UInt8.random(in: 0...255, using: &generator)
      text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
    }
    return String(decoding: text, as: UTF8.self)
  }

  /// Where token files go: `$XDG_RUNTIME_DIR/toolhost` when that variable is an absolute path to an existing folder
  /// (the login's own, emptied at logout), else `$XDG_STATE_HOME/toolhost` when that is absolute, else
  /// `~/.local/state/toolhost`. Relative values are ignored, as the XDG specification says.
  public static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    func absolute(_ name: String) -> String? {
      environment[name].flatMap { $0.hasPrefix("/") ? $0 : nil }
    }
    if let runtime = absolute("XDG_RUNTIME_DIR") {
      var isFolder: ObjCBool = false
      if FileManager.default.fileExists(atPath: runtime, isDirectory: &isFolder), isFolder.boolValue {
        return runtime + "/toolhost"
      }
    }
    if let state = absolute("XDG_STATE_HOME") { return state + "/toolhost" }
    let home = absolute("HOME") ?? NSHomeDirectory()
    return home + "/.local/state/toolhost"
  }

  /// The token file of the server on `port` in `folder`.
  public static func filePath(port: Int, in folder: String) -> String {
    folder + "/serve-\(port).token"
  }

  /// Writes `token` (and a newline) to `serve-PORT.token` in `folder`, made anew with mode 0600; the folder is made
  /// 0700 when missing, narrowed to 0700 when it is the user's own, and refused when it is a symbolic link, belongs to
  /// someone else, or it or a folder above it can be changed by others.
  ///
  /// - Returns: the file's path.
  /// - Throws: ``FileError`` saying which path is wrong and why.
  @discardableResult
  public static func write(_ token: String, port: Int, in folder: String) throws(FileError) -> String {
    do { try FileSafety.makePrivateFolder(folder) } catch {
      throw FileError(
        description: "cannot make the folder \(folder): \(String(cString: strerror(error.code.rawValue)))")
    }
    let info: FileSafety.Status
    switch FileSafety.status(of: folder) {
    case .success(let status): info = status
    case .failure(let error):
      throw FileError(description: "cannot look at \(folder): \(String(cString: strerror(error.code.rawValue)))")
    }
    guard info.isFolder else {
      throw FileError(description: "\(folder) is not a folder (a symbolic link, say); remove it or set XDG_STATE_HOME")
    }
    guard info.owner == getuid() else {
      throw FileError(description: "\(folder) belongs to another user; remove it or set XDG_STATE_HOME")
    }
    do { try FileSafety.narrowToPrivate(folder) } catch {
      throw FileError(
        description: "cannot make \(folder) private (chmod 700): \(String(cString: strerror(error.code.rawValue)))")
    }
    if let problem = FileSafety.folderProblem(folder) { throw FileError(description: problem) }
    let path = filePath(port: port, in: folder)
    // A file left by a server that was killed is replaced by a new one, so its mode is 0600 whatever it was.
    if unlink(path) != 0, errno != ENOENT {
      throw FileError(description: "cannot replace \(path): \(String(cString: strerror(errno)))")
    }
    do { try FileSafety.writeSecretFile(path, Array((token + "\n").utf8)) } catch {
      throw FileError(description: "cannot write \(path): \(String(cString: strerror(error.code.rawValue)))")
    }
    return path
  }

  /// Removes the token file at `path` if it still holds `token` (a later server on the same port keeps its own).
  public static func remove(_ path: String, token: String) {
    guard let bytes = try? FileSafety.readRegularFile(path, limit: 4096, user: nil),
      String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == token
    else { return }
    unlink(path)
  }

  /// Whether `host` is a numeric address that means "every address of this machine" when bound (`0.0.0.0`, `::`),
  /// in any of the forms the system's resolver reads as one: `0`, `0x0`, `0.0`, `::0`, `[::]`, `::ffff:0.0.0.0`.
  public static func isUnspecified(_ host: String) -> Bool {
    var name = host
    if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    var hints = addrinfo()
    hints.ai_flags = AI_NUMERICHOST
    var found: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(name, nil, &hints, &found) == 0, let first = found else { return false }
    defer { freeaddrinfo(first) }
    var entry: UnsafeMutablePointer<addrinfo>? = first
    while let current = entry {
      if let address = current.pointee.ai_addr {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
          let zero = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr == 0 }
          if zero { return true }
        case AF_INET6:
          // `::`, or `::ffff:0.0.0.0` (an IPv4-mapped "every address", which binds every IPv4 address).
          let zero = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
            withUnsafeBytes(of: pointer.pointee.sin6_addr) { bytes in
              bytes.allSatisfy { $0 == 0 }
                || (bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                  && bytes[12..<16].allSatisfy { $0 == 0 })
            }
          }
          if zero { return true }
        default: break
        }
      }
      entry = current.pointee.ai_next
    }
    return false
  }
}
