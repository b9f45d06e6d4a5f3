import CToolhostSupport
import Foundation

/// Resource limits for one plugin call (or one persistent plugin's or MCP server's lifetime).
///
/// Memory, CPU time, file size and open files are set with `setrlimit` in the child before it starts, so they hold
/// with or without a cgroup; where the call's cgroup has the `memory` and `pids` controllers, memory and processes
/// are also enforced there (`memory.max`, `pids.max`). Without the `pids` controller the process limit is watched:
/// a call's cgroup with more processes than allowed is ended. Without any cgroup the process limit is not enforced
/// (only the time limit and the tree kill at the end bound a fork storm). `nil` means no limit.
///
/// ```swift
/// var limits = ResourceLimits.pluginDefaults
/// limits.memoryBytes = 2 << 30    // 2 GiB for a plugin that needs it
/// ```
public struct ResourceLimits: Sendable, Equatable, CustomStringConvertible {
  /// Which limit a call ran into.
  public enum Kind: String, Sendable, Equatable, CaseIterable {
    /// Private writable memory (`RLIMIT_DATA`, `memory.max`).
    case memory
    /// CPU time (`RLIMIT_CPU`).
    case cpuTime
    /// Processes alive at once in the call (`pids.max`, or watched in the call's cgroup).
    case processes
    /// The size of any one file the plugin writes (`RLIMIT_FSIZE`).
    case fileSize
    /// Open descriptors per process (`RLIMIT_NOFILE`).
    case openFiles

    /// Words for messages: `memory`, `CPU time`, `process`, `file size`, `open files`.
    public var words: String {
      switch self {
      case .memory: "memory"
      case .cpuTime: "CPU time"
      case .processes: "process"
      case .fileSize: "file size"
      case .openFiles: "open files"
      }
    }
  }

  /// The most private writable memory, in bytes.
  public var memoryBytes: Int?
  /// The most CPU time, in seconds (SIGXCPU at the limit, SIGKILL 2 s later).
  public var cpuSeconds: Int?
  /// The most processes alive at once.
  public var processes: Int?
  /// The largest file the plugin may write, in bytes.
  public var fileSizeBytes: Int?
  /// The most open descriptors per process.
  public var openFiles: Int?
  /// The most bytes toolhost reads as one call's output: a spawned plugin's stdout, or one reply line of a
  /// persistent plugin or an MCP server. Past it the call fails with `outputTooLarge` (and the process is ended).
  /// toolhost enforces it as it reads, not the kernel; `nil` is ``defaultOutputBytes``.
  public var outputBytes: Int?

  /// Makes limits; `nil` is no limit (for ``outputBytes``: the default).
  public init(
    memoryBytes: Int? = nil, cpuSeconds: Int? = nil, processes: Int? = nil, fileSizeBytes: Int? = nil,
    openFiles: Int? = nil, outputBytes: Int? = nil
  ) {
    self.memoryBytes = memoryBytes
    self.cpuSeconds = cpuSeconds
    self.processes = processes
    self.fileSizeBytes = fileSizeBytes
    self.openFiles = openFiles
    self.outputBytes = outputBytes
  }

  /// The output limit when nothing sets one (the manifest's `limits.outputMiB`, `--max-output`): 8 MiB. The one
  /// default of every reader: spawned plugins, persistent plugins' and MCP servers' lines, MCP over HTTP.
  public static let defaultOutputBytes = 8 << 20

  /// No limits at all (toolhost's own helpers, the local model server).
  public static let none = ResourceLimits()

  /// What a plugin gets unless its manifest or the caller says otherwise: 1 GiB of memory, 5 minutes of CPU, 128
  /// processes, 256 MiB per file, 1,024 open files.
  public static let pluginDefaults = ResourceLimits(
    memoryBytes: 1 << 30, cpuSeconds: 300, processes: 128, fileSizeBytes: 256 << 20, openFiles: 1024)

  /// These limits with every value `override` sets taking the place of this one's.
  public func overridden(by override: ResourceLimits) -> ResourceLimits {
    ResourceLimits(
      memoryBytes: override.memoryBytes ?? memoryBytes, cpuSeconds: override.cpuSeconds ?? cpuSeconds,
      processes: override.processes ?? processes, fileSizeBytes: override.fileSizeBytes ?? fileSizeBytes,
      openFiles: override.openFiles ?? openFiles, outputBytes: override.outputBytes ?? outputBytes)
  }

  /// The limit of `kind` in words: `512 MiB`, `10 s`, `64`.
  public func value(of kind: Kind) -> String {
    switch kind {
    case .memory: memoryBytes.map(byteCountText) ?? "none"
    case .cpuTime: cpuSeconds.map { "\($0) s" } ?? "none"
    case .processes: processes.map(String.init) ?? "none"
    case .fileSize: fileSizeBytes.map(byteCountText) ?? "none"
    case .openFiles: openFiles.map(String.init) ?? "none"
    }
  }

  /// `memory 1 GiB, CPU time 300 s, processes 128, file size 256 MiB, open files 1024`.
  public var description: String {
    let set: [(Kind, Bool)] = [
      (.memory, memoryBytes != nil), (.cpuTime, cpuSeconds != nil), (.processes, processes != nil),
      (.fileSize, fileSizeBytes != nil), (.openFiles, openFiles != nil),
    ]
    let parts = set.filter(\.1).map { kind, _ in
      (kind == .processes ? "processes" : kind.words) + " " + value(of: kind)
    }
    return parts.isEmpty ? "none" : parts.joined(separator: ", ")
  }

  /// The `setrlimit` calls the child makes before it starts.
  var rlimits: [toolhost_rlimit] {
    func limit(_ resource: Int32, _ soft: Int, _ hard: Int) -> toolhost_rlimit {
      toolhost_rlimit(resource: resource, soft: rlim_t(soft), hard: rlim_t(hard))
    }
    var out: [toolhost_rlimit] = []
    if let m = memoryBytes { out.append(limit(Int32(RLIMIT_DATA.rawValue), m, m)) }
    if let c = cpuSeconds { out.append(limit(Int32(RLIMIT_CPU.rawValue), c, c + 2)) }
    if let f = fileSizeBytes { out.append(limit(Int32(RLIMIT_FSIZE.rawValue), f, f)) }
    if let n = openFiles { out.append(limit(Int32(RLIMIT_NOFILE.rawValue), n, n)) }
    return out
  }

  /// Which limit, if any, explains how a call ended: what the runner saw (its cgroup's events, the process watch,
  /// CPU time used), then the signal (SIGXCPU, SIGXFSZ), then the plugin's last words on stderr for the limits
  /// that only make a system call fail (an allocation, an open).
  ///
  /// Only a call that failed (non-zero exit or a signal) is ever blamed on a limit.
  public func exceeded(by outcome: ProcessOutcome) -> Kind? {
    if let kind = outcome.limitExceeded { return kind }
    let failed: Bool
    switch outcome.termination {
    case .exited(let status):
      // A shell reports a command that a signal ended as 128 + the signal.
      if status == 128 + SIGXCPU, cpuSeconds != nil { return .cpuTime }
      if status == 128 + SIGXFSZ, fileSizeBytes != nil { return .fileSize }
      failed = status != 0
    case .signaled(let signal):
      if signal == SIGXCPU, cpuSeconds != nil { return .cpuTime }
      if signal == SIGXFSZ, fileSizeBytes != nil { return .fileSize }
      if signal == SIGKILL, let c = cpuSeconds, outcome.cpuTime.seconds >= Double(c) { return .cpuTime }
      failed = true
    }
    guard failed else { return nil }
    let log = outcome.stderrText.lowercased()
    if memoryBytes != nil, Self.memoryWords.contains(where: log.contains) { return .memory }
    if openFiles != nil, log.contains("too many open files") { return .openFiles }
    if fileSizeBytes != nil, log.contains("file too large") { return .fileSize }
    return nil
  }

  /// How programs say that an allocation failed: Python, C, C++, Rust, Go, Swift, Node.
  static let memoryWords = [
    "memoryerror", "cannot allocate memory", "out of memory", "bad_alloc", "memory allocation of",
    "failed to allocate", "allocation failed", "fatal error: runtime: out of memory",
  ]
}
