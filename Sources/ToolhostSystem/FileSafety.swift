public import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Checks of who may change a file toolhost acts on, and the reading and writing of files that may hold secrets.
///
/// The ownership rule is ssh's StrictModes: a plugin folder, manifest or command that another user could change is
/// code that other user chooses, so it is refused unless the user turns the check off.
public enum FileSafety {
  /// The most bytes a manifest (or toolhost's own config and trust files) may have.
  public static let manifestSizeLimit = 1 << 20

  /// Why `info` (the `stat` of `path`) may not be trusted: owned by someone other than `user` or root, or writable
  /// by its group or by everyone (a sticky folder such as `/tmp` may be world-writable when `allowSticky`).
  ///
  /// - Returns: the problem and its fix in words, or `nil` when the file is safe.
  public static func ownershipProblem(
    _ path: String, _ info: stat, user: uid_t = getuid(), allowSticky: Bool = false
  ) -> String? {
    problem(path, info, user: user, rootToo: true, allowSticky: allowSticky, could: "change what toolhost runs")
  }

  /// ``ownershipProblem(_:_:user:allowSticky:)`` with what others `could` do in its words, and root's files
  /// refused too unless `rootToo`.
  private static func problem(
    _ path: String, _ info: stat, user: uid_t, rootToo: Bool, allowSticky: Bool, could: String
  ) -> String? {
    let mode = info.st_mode & 0o7777
    let isDirectory = info.st_mode & S_IFMT == S_IFDIR
    if info.st_uid != user && !(rootToo && info.st_uid == 0) {
      let allowed = rootToo ? "you or root" : "you (\(userName(user)))"
      return "\(path) belongs to user \(userName(info.st_uid)), not to \(allowed), so that user could \(could) "
        + "(fix: chown \(userName(user)) \(quoted(path)))"
    }
    if allowSticky && isDirectory && mode & UInt32(S_ISVTX) != 0 { return nil }
    if mode & 0o022 != 0 {
      let who = mode & 0o002 != 0 ? "every user" : "its group"
      return "\(path) is writable by \(who) (mode \(String(mode, radix: 8))), so others could \(could) "
        + "(fix: chmod go-w \(quoted(path)))"
    }
    return nil
  }

  /// Why `folder` may not hold files that are the user's alone (the chat history): it must be a real folder, not a
  /// symbolic link, owned by `user` (not even by root when `user` is not root) and writable by nobody else; each
  /// folder above it must be owned by `user` or root and writable by nobody else, sticky folders such as `/tmp`
  /// excepted (as ``folderProblem(_:user:)`` asks of a plugin folder's).
  ///
  /// - Returns: the problem, naming the path, its owner or mode, and the fix, or `nil` when the folder is safe.
  public static func privateFolderProblem(_ folder: String, user: uid_t = getuid()) -> String? {
    let could = "read or replace what toolhost keeps there"
    let absolute = folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
    let path = Checker.normalized(absolute)
    var info = stat()
    guard lstat(path, &info) == 0 else {
      return "\(path) cannot be looked at: \(String(cString: strerror(errno)))"
    }
    if info.st_mode & S_IFMT == S_IFLNK {
      let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
      return "\(path) is a symbolic link (to \(target)), which toolhost does not follow for private files "
        + "(fix: replace the link with the folder it points to)"
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
      let kind = info.st_mode & S_IFMT == S_IFREG ? "a file" : kindName(info.st_mode)
      return "\(path) is not a folder (it is \(kind))"
    }
    if let problem = problem(path, info, user: user, rootToo: false, allowSticky: false, could: could) {
      return problem
    }
    var above = Checker.parent(of: path)
    while let folder = above {
      if stat(folder, &info) == 0,
        let problem = problem(folder, info, user: user, rootToo: true, allowSticky: true, could: could)
      {
        return problem
      }
      above = Checker.parent(of: folder)
    }
    return nil
  }

  /// The first problem of `folder` and each folder above it (sticky folders such as `/tmp` excepted), or `nil`.
  public static func folderProblem(_ folder: String, user: uid_t = getuid()) -> String? {
    Checker(user: user).folderProblem(folder)
  }

  /// The problem of one file or folder (no look at the folders above it), or `nil`.
  public static func pathProblem(_ path: String, user: uid_t = getuid()) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return ownershipProblem(path, info, user: user)
  }

  /// The problem of a program toolhost would run: the file (links followed to the real file), then the folder it
  /// is really in and each folder above it (sticky ones excepted), or `nil`.
  public static func programProblem(_ path: String, user: uid_t = getuid()) -> String? {
    Checker(user: user).programProblem(path)
  }

  /// The ownership checks of many paths at once, as discovery makes them: what it learns of a folder (and the
  /// folders above it) it remembers, so a thousand plugins under one folder cost one look at each folder.
  public final class Checker: Sendable {
    /// The user files must belong to (or root).
    public let user: uid_t
    /// A folder, and whether it is looked at as a folder above something (sticky ones excepted) or as the folder of
    /// something (not sticky-excepted itself).
    private struct FolderKey: Hashable {
      var path: String
      var asAncestor: Bool
    }
    /// Folder → the problem of it or a folder above it.
    private let folders = Mutex<[FolderKey: String?]>([:])
    /// Program → its problem (many plugins run one interpreter).
    private let programs = Mutex<[String: String?]>([:])

    /// A checker for `user`.
    public init(user: uid_t = getuid()) {
      self.user = user
    }

    /// The first problem of `folder` and each folder above it (sticky folders excepted), or `nil`.
    public func folderProblem(_ folder: String) -> String? {
      problem(of: Self.normalized(folder), asAncestor: false)
    }

    /// The problem of a program: the real file, then its real folder and the folders above it, or `nil`.
    public func programProblem(_ path: String) -> String? {
      if let known = programs.withLock({ $0[path] }) { return known }
      let problem: String?
      if let real = realpath(path, nil) {
        let resolved = String(cString: real)
        free(real)
        problem = FileSafety.pathProblem(resolved, user: user) ?? Self.parent(of: resolved).flatMap(folderProblem)
      } else {
        problem = FileSafety.pathProblem(path, user: user)
      }
      programs.withLock { $0[path] = problem }
      return problem
    }

    /// The problem of the folder `path` (sticky-excepted when `asAncestor`), else of the folders above it.
    private func problem(of path: String, asAncestor: Bool) -> String? {
      let key = FolderKey(path: path, asAncestor: asAncestor)
      if let known = folders.withLock({ $0[key] }) { return known }
      var info = stat()
      let own =
        stat(path, &info) == 0
        ? FileSafety.ownershipProblem(path, info, user: user, allowSticky: asAncestor) : nil
      let found = own ?? Self.parent(of: path).flatMap { problem(of: $0, asAncestor: true) }
      folders.withLock { $0[key] = found }
      return found
    }

    /// The folder above `path` (`nil` for `/`), by the text of the path.
    package static func parent(of path: String) -> String? {
      guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
      return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func normalized(_ path: String) -> String {
      path.contains("/.") || path.contains("//") || (path.hasSuffix("/") && path != "/")
        ? (path as NSString).standardizingPath : path
    }
  }

  /// What a file read by ``readRegularFile(_:limit:user:)`` was found to be.
  public struct ReadProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// Whether the problem is who may change the file (rather than what it is).
    public var isOwnership: Bool
    /// What is wrong, in words.
    public var description: String
  }

  /// Reads a small regular file without ever blocking: opened non-blocking (a FIFO cannot hang the reader), checked
  /// with `fstat` to be a regular file (a link to one is fine; `/dev/zero` is not) of at most `limit` bytes, and,
  /// when `user` is given, owned by that user or root and not group- or world-writable.
  ///
  /// - Throws: ``ReadProblem`` saying what the file is instead, or why it cannot be opened or read.
  public static func readRegularFile(_ path: String, limit: Int = manifestSizeLimit, user: uid_t?) throws(ReadProblem)
    -> [UInt8]
  {
    func notRegular(_ mode: mode_t) -> ReadProblem {
      ReadProblem(
        isOwnership: false, description: "not a regular file (it is \(kindName(mode))); toolhost reads only files")
    }
    // A look before opening, so that no device is ever opened (opening some has effects); fstat below decides.
    var before = stat()
    if stat(path, &before) == 0, before.st_mode & S_IFMT != S_IFREG { throw notRegular(before.st_mode) }
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
    guard fd >= 0 else {
      throw ReadProblem(isOwnership: false, description: "cannot read the file: \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      throw ReadProblem(isOwnership: false, description: "cannot read the file: \(String(cString: strerror(errno)))")
    }
    guard info.st_mode & S_IFMT == S_IFREG else { throw notRegular(info.st_mode) }
    guard Int(info.st_size) <= limit else {
      throw ReadProblem(
        isOwnership: false,
        description: "the file has \(info.st_size) bytes; the most toolhost reads is \(limit) (\(limit >> 20) MiB)")
    }
    if let user, let problem = ownershipProblem(path, info, user: user) {
      throw ReadProblem(isOwnership: true, description: problem)
    }
    let bytes: [UInt8]
    do { bytes = try readAll(fd, upTo: limit) } catch {
      throw ReadProblem(
        isOwnership: false, description: "cannot read the file: \(String(cString: strerror(error.code.rawValue)))")
    }
    guard bytes.count <= limit else {
      throw ReadProblem(isOwnership: false, description: "the file grew past \(limit) bytes while it was read")
    }
    return bytes
  }

  /// Replaces `path` with `bytes` atomically (a temporary file in the same folder, then `rename`): a new file gets
  /// mode 0600, an existing one keeps its mode, so a file that may hold secrets never becomes readable by others.
  ///
  /// - Throws: `POSIXError` when the folder cannot be written.
  public static func writeSecretFile(_ path: String, _ bytes: [UInt8]) throws(POSIXError) {
    var mode: mode_t = 0o600
    var existing = stat()
    if stat(path, &existing) == 0 { mode = existing.st_mode & 0o777 }
    let folder = (path as NSString).deletingLastPathComponent
    // A fresh name made with O_EXCL: in a shared folder nobody can have made the file first and read along.
    var fd: Int32 = -1
    var temporary = ""
    for _ in 0..<16 {
      temporary =
        (folder.isEmpty ? "." : folder) + "/." + (path as NSString).lastPathComponent + "."
        + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".tmp"
      fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
      if fd >= 0 || errno != EEXIST { break }
    }
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    var failure: Int32 = 0
    do { try writeAll(fd, bytes) } catch { failure = error.code.rawValue }
    // fchmod after creation: the umask cannot widen 0600, but an existing file's own mode may be narrower or wider.
    if failure == 0, fchmod(fd, mode) != 0 { failure = errno }
    if failure == 0, fsync(fd) != 0 { failure = errno }
    close(fd)
    if failure == 0, rename(temporary, path) != 0 { failure = errno }
    if failure != 0 {
      unlink(temporary)
      throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
    }
  }

  /// Makes `folder` (and its parents) with mode 0700 when it does not exist.
  ///
  /// - Throws: `POSIXError` when it cannot be made.
  public static func makePrivateFolder(_ folder: String) throws(POSIXError) {
    var info = stat()
    if stat(folder, &info) == 0 { return }
    let parent = (folder as NSString).deletingLastPathComponent
    if !parent.isEmpty && parent != folder { try makePrivateFolder(parent) }
    if mkdir(folder, 0o700) != 0 && errno != EEXIST {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
  }

  /// Makes an existing folder of the user's that others may read or enter 0700, opened without following a link (a
  /// folder made by an older version, by hand or under another umask gets no looser mode than a new one). Does
  /// nothing to a folder of another user's, a link, or one that is private already.
  ///
  /// - Returns: the folder's mode before, when it was narrowed.
  /// - Throws: the error of `fchmod` when the folder could not be narrowed.
  @discardableResult
  public static func narrowToPrivate(_ folder: String) throws(POSIXError) -> mode_t? {
    let fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_uid == getuid(), info.st_mode & 0o077 != 0 else { return nil }
    guard fchmod(fd, 0o700) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return info.st_mode & 0o777
  }

  /// What a file of `mode` is, in words ("a FIFO", "a socket").
  package static func kindName(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFDIR: "a folder"
    case S_IFIFO: "a FIFO"
    case S_IFCHR: "a character device"
    case S_IFBLK: "a block device"
    case S_IFSOCK: "a socket"
    default: "not a regular file"
    }
  }

  /// The name of the user `uid`, or its number when it has none.
  public static func userName(_ uid: uid_t) -> String {
    if let entry = getpwuid(uid), let name = entry.pointee.pw_name { return String(cString: name) }
    return "\(uid)"
  }

  static func quoted(_ path: String) -> String {
    path.allSatisfy { $0.isLetter || $0.isNumber || "/._-+".contains($0) }
      ? path : "'" + path.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
  }
}

extension FileSafety {
  /// What `lstat` says of a path, for checks made outside this module: whether it is a folder (not a link to one),
  /// its owner and its permission bits.
  package struct Status: Sendable, Equatable {
    /// Whether the path is a folder itself (a symbolic link is not).
    package var isFolder: Bool
    /// The owner's user id.
    package var owner: uid_t
    /// The permission bits (`0o700` for a private folder).
    package var permissions: mode_t
  }

  /// The ``Status`` of `path`, or the `errno` of `lstat` when it fails.
  package static func status(of path: String) -> Result<Status, POSIXError> {
    var info = stat()
    guard lstat(path, &info) == 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)) }
    return .success(
      Status(isFolder: info.st_mode & S_IFMT == S_IFDIR, owner: info.st_uid, permissions: info.st_mode & 0o7777))
  }
}

extension FileSafety {
  /// What identifies a file's content without reading it, following links: its device, inode, size and change
  /// time to the nanosecond, NUL-separated; `nil` when `stat` fails. Changes whenever the file is replaced or written.
  package static func identity(of path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return "\(info.st_dev)\u{0}\(info.st_ino)\u{0}\(info.st_size)\u{0}\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
  }
}
