import CToolhostSupport
import Foundation

/// What a confined child may reach, enforced by the kernel from before its `exec`: Landlock for files (and TCP
/// ports), and a seccomp filter that refuses sockets when it has no network. Everything it starts inherits it and
/// cannot widen it (no new privileges: a set-user-id program runs without them).
///
/// ```swift
/// let spec = ProcessSpec(
///   executable: "/usr/bin/python3", arguments: ["tool.py"],
///   confinement: Confinement(readable: ["/srv/tool"], writable: ["/tmp/tool-scratch"]))
/// ```
///
/// A spec whose confinement this machine cannot enforce does not start (``ConfinementSupport/problem(for:)`` says
/// why): confinement fails closed.
public struct Confinement: Sendable, Hashable {
  /// What a confined child may do on the network.
  public enum Network: Sendable, Hashable {
    /// No sockets at all: `socket(2)` fails (socket pairs and pipes still work), so no TCP, UDP, name lookup or
    /// connection to a Unix socket.
    case none
    /// TCP connections to these ports (of any host) and UDP (which name lookups need); no listening, and no Unix
    /// socket (a container engine's or D-Bus's).
    case tcpPorts([Int])
    /// Anything the user could reach.
    case unrestricted
  }

  /// What it may do on the network.
  public var network: Network
  /// Absolute paths it may read (and run programs from), beneath folders too, on top of ``systemPaths``.
  public var readable: [String]
  /// Absolute paths it may read, write, create and delete in, beneath folders too.
  public var writable: [String]

  /// Makes a confinement: by default no network and only ``systemPaths`` to read.
  public init(network: Network = .none, readable: [String] = [], writable: [String] = []) {
    self.network = network
    self.readable = readable
    self.writable = writable
  }

  /// What every confined process may read and run, so that interpreters and libraries load: the system's programs,
  /// libraries and settings (`/usr`, `/bin`, `/lib…`, `/etc`, `/opt`, `/nix/store`), `/sys`, and of `/proc` the
  /// machine's figures (``procFiles``) and the process's own folder (its `/proc/self`, added by the child itself),
  /// never another process's: its environment and command line stay out of reach. Paths this machine lacks are
  /// skipped.
  public static let systemPaths = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store", "/sys",
  ]
  /// The files of `/proc` about the machine rather than a process, which runtimes read (processors, memory, load,
  /// kernel settings).
  public static let procFiles = [
    "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/version", "/proc/sys",
    "/proc/filesystems", "/proc/swaps", "/proc/pressure",
  ]
  /// Devices every confined process may read and write: they hold nothing.
  public static let devices = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"]
  /// Where a name lookup's settings live besides `/etc` (systemd-resolved's stub file); readable when the network is.
  static let resolverPaths = ["/run/systemd/resolve"]

  /// A Landlock ruleset of this confinement for the kernel's `abi`: a close-on-exec descriptor the child restricts
  /// itself to.
  /// - Throws: ``ProcessLaunchError`` naming the path or port that could not be added.
  func makeRuleset(abi: Int32, executable: String) throws(ProcessLaunchError) -> Int32 {
    let handleTCP: Int32 = if case .tcpPorts = network { 1 } else { 0 }
    // Signals always stay inside; abstract Unix sockets too when there is no network.
    let scope: Int32 = network == .none ? 2 : 1
    let ruleset = toolhost_landlock_ruleset(abi, handleTCP, scope)
    guard ruleset >= 0 else {
      throw ProcessLaunchError(
        executable: executable, reason: "could not make its Landlock ruleset: \(String(cString: strerror(errno)))")
    }
    func allow(_ path: String, write: Bool) throws(ProcessLaunchError) {
      if toolhost_landlock_allow_path(ruleset, abi, path, write ? 1 : 0) == 0 || errno == ENOENT { return }
      let reason = String(cString: strerror(errno))
      close(ruleset)
      throw ProcessLaunchError(
        executable: executable, reason: "could not let it \(write ? "write" : "read") \(path): \(reason)")
    }
    var reads = Self.systemPaths + Self.procFiles + readable
    if network != .none { reads += Self.resolverPaths }
    for path in reads { try allow(path, write: false) }
    for path in Self.devices + writable { try allow(path, write: true) }
    if case .tcpPorts(let ports) = network {
      for port in ports
      where !(1...65535).contains(port) || toolhost_landlock_allow_tcp_port(ruleset, UInt32(port)) != 0 {
        let reason = String(cString: strerror(errno))
        close(ruleset)
        throw ProcessLaunchError(executable: executable, reason: "could not allow TCP port \(port): \(reason)")
      }
    }
    return ruleset
  }
}

/// What confinement this machine's kernel gives (``current``), and what it lacks for a given ``Confinement``.
public struct ConfinementSupport: Sendable, Equatable, CustomStringConvertible {
  /// The Landlock ABI version (1 and up), or `nil` without Landlock.
  public var landlockABI: Int32?
  /// Why there is no Landlock, when there is none.
  public var landlockMissing: String?
  /// Whether the socket filter (seccomp) can be installed.
  public var socketFilter: Bool

  /// This machine's, probed once.
  public static let current: ConfinementSupport = probe()

  /// Asks the kernel.
  static func probe() -> ConfinementSupport {
    let abi = toolhost_landlock_abi()
    var missing: String?
    if abi < 1 {
      #if os(Linux)
        missing =
          errno == EOPNOTSUPP
          ? "Landlock is built into this kernel but turned off (add landlock to the lsm= boot parameter)"
          : "this kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)"
      #else
        missing = "toolhost confines plugins with Linux's Landlock, which this system does not have"
      #endif
    }
    return ConfinementSupport(
      landlockABI: abi >= 1 ? abi : nil, landlockMissing: missing, socketFilter: toolhost_socket_filter_supported() == 1
    )
  }

  /// What this machine lacks to enforce `confinement`, in words that say what to do; `nil` when it can.
  public func problem(for confinement: Confinement) -> String? {
    guard let abi = landlockABI else { return landlockMissing }
    if abi < 3 {
      return
        "this kernel's Landlock (ABI \(abi)) cannot keep a plugin from truncating your files: that needs Linux 6.2 "
        + "or later (ABI 3)"
    }
    if !socketFilter {
      return "this kernel cannot filter system calls (seccomp), which keeps a plugin off the network and from "
        + "changing files' modes and owners"
    }
    switch confinement.network {
    case .tcpPorts where abi < 4:
      return "this kernel's Landlock (ABI \(abi)) cannot limit TCP ports: that needs Linux 6.7 or later (ABI 4)"
    default: return nil
    }
  }

  /// One line for `toolhost doctor`: what is enforced, or what is missing.
  public var description: String {
    guard let abi = landlockABI else { return "none: \(landlockMissing ?? "no Landlock")" }
    var parts = ["files (Landlock ABI \(abi))"]
    if abi >= 4 { parts.append("TCP ports") }
    if socketFilter { parts.append("sockets (seccomp)") }
    if abi >= 6 { parts.append("signals and abstract sockets") }
    return parts.joined(separator: ", ")
  }
}
