import CToolhostSupport
import Foundation
import Synchronization

/// How toolhost makes sure that every process a plugin call starts is gone when the call ends, and when toolhost
/// itself exits or is killed.
///
/// Every child starts in a session of its own (so it has no controlling terminal and its own process group) and
/// carries the variable `TOOLHOST_MARKER`, a marker naming this host and call that its descendants inherit.
/// On top of that, the strongest mechanism the machine allows:
/// - ``Mechanism/cgroup``: a cgroup v2 per call, created under the host's own cgroup, that the child joins before it
///   runs anything. `cgroup.kill` ends every process in it at once, whatever it did (setsid, setpgid, double
///   forks, a cleared environment). Memory and process limits are enforced there when the `memory` and `pids`
///   controllers are available.
/// - ``Mechanism/subreaper``: the process group, and the subreaper's sweep below.
///
/// With either mechanism the host is a child subreaper, so a descendant that is orphaned is re-parented to toolhost
/// instead of init; at the end of a call toolhost ends its own orphaned children (in another session) that carry
/// the call's marker or no marker at all, with their descendants. Without a cgroup that catches what left the
/// process group; with one, what moved itself out of the cgroup (into any other cgroup it may write): once the
/// call's cgroup is empty, everything the call started that is still alive is such an orphan or its descendant.
/// Left alone: an orphan carrying another marker (another call's, or ``detachedMarker``), and one still in a call's
/// cgroup (that call's to end).
///
/// A watchdog (`/bin/sh`, in a session of its own) holds a pipe from the host; when toolhost dies, even by SIGKILL,
/// it ends every cgroup of this host, or every process carrying this host's marker.
///
/// ```swift
/// let containment = Containment.shared
/// print(containment.summary)      // "cgroup v2 per call (/sys/fs/cgroup/…/toolhost-4242); …"
/// ```
public final class Containment: Sendable {
  /// The mechanism that ends a call's whole process tree.
  public enum Mechanism: String, Sendable {
    /// A cgroup v2 per call, ended with `cgroup.kill`; the subreaper's sweep ends what moved itself out of it.
    case cgroup
    /// The process group, and the subreaper's sweep of the orphans carrying the call's marker variable.
    case subreaper
  }

  /// Which mechanism to use.
  public enum Preference: String, Sendable {
    /// A cgroup where the host may create one, otherwise the subreaper (``Containment/summary`` says why).
    case automatic = "auto"
    /// The subreaper, even where a cgroup could be created.
    case subreaper

    /// `TOOLHOST_CONTAINMENT` (`auto` or `subreaper`) of `environment`; automatic when unset or unknown.
    public static func from(environment: [String: String]) -> Preference {
      environment["TOOLHOST_CONTAINMENT"].flatMap(Preference.init(rawValue:)) ?? .automatic
    }
  }

  /// The name of the marker variable every contained process carries.
  /// (Not `TOOLHOST_CONTAINMENT`, the setting: a toolhost started inside a plugin must not read its marker as one.)
  public static let markerVariable = "TOOLHOST_MARKER"

  /// The marker of a program toolhost starts to outlive it (the local model's shared server): no call's, and not of
  /// this host, so no sweep and no watchdog ends it.
  static let detachedMarker = "detached"

  /// The containment of this process, as `TOOLHOST_CONTAINMENT` in its environment asks.
  public static let shared = Containment(preference: .from(environment: ProcessInfo.processInfo.environment))

  /// The mechanism in force.
  public let mechanism: Mechanism
  /// The folder holding this host's per-call cgroups (cgroup mechanism only).
  public let cgroupFolder: String?
  /// The cgroup controllers available to a call's cgroup (`memory`, `pids`), for its limits.
  public let controllers: Set<String>
  /// Why the cgroup mechanism is not in force, when it is not.
  public let fallbackReason: String?
  /// This host's marker: `<pid>-<random>`; a call's marker is `<host marker>.<call number>`.
  public let hostMarker: String
  private let cells = Atomic<Int>(0)
  private let watchdog = Mutex<Int32>(-1)
  /// Every child that any containment of this process started and has not reaped yet.
  private static let liveSpawned = Mutex<Set<Int32>>([])
  /// The same children, under a lock of its own that no spawn holds while it runs: for a first look that need not
  /// wait for a spawn under way (a child missing from it sends the look to `liveSpawned`).
  private static let recordedSpawns = Mutex<Set<Int32>>([])

  /// Sets containment up as `preference` asks: finds the host's cgroup v2 and tries to create a folder for the
  /// calls' cgroups there, or makes the host a child subreaper. Never throws; ``summary`` says what is in force.
  public init(preference: Preference) {
    hostMarker = "\(getpid())-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    var reason: String? = nil
    var folder: String? = nil
    var controllers: Set<String> = []
    if preference == .subreaper {
      reason = "the subreaper was asked for (TOOLHOST_CONTAINMENT=subreaper)"
    } else {
      // A probe: the folder is made again, for good, by the first call (a command that runs no plugin leaves
      // no cgroup behind).
      switch Self.makeCgroupFolder(marker: hostMarker) {
      case .success(let made):
        folder = made.path
        Self.callCgroupFolders.withLock { $0.append(made.relative + "/") }
        controllers = made.controllers
        rmdir(made.path)
      case .failure(let why): reason = why.reason
      }
    }
    cgroupFolder = folder
    self.controllers = controllers
    fallbackReason = reason
    mechanism = folder != nil ? .cgroup : .subreaper
    // With a cgroup too: a process that moves itself out of its call's cgroup is then still the host's to end.
    if toolhost_set_child_subreaper() == 0 {
      Self.isSubreaper.store(true, ordering: .releasing)
      Self.startOrphanReaper()
    }
  }

  /// One line for `toolhost doctor`: the mechanism, where, and how each limit is enforced.
  public var summary: String {
    switch mechanism {
    case .cgroup:
      let memory = controllers.contains("memory") ? "memory.max" : "setrlimit (no memory controller)"
      let pids = controllers.contains("pids") ? "pids.max" : "watched in the cgroup (no pids controller)"
      let escaped =
        Self.isSubreaper.load(ordering: .acquiring)
        ? " (and the subreaper's marker sweep those that leave the cgroup)" : ""
      return "cgroup v2 per call (\(cgroupFolder ?? "")), cgroup.kill ends each call's processes\(escaped); "
        + "memory: \(memory); processes: \(pids); CPU time, file size, open files: setrlimit"
    case .subreaper:
      return "child subreaper + marker variable + process group (\(fallbackReason ?? "no cgroup")); "
        + "memory, CPU time, file size, open files: setrlimit; processes: not enforced without a cgroup"
    }
  }

  // MARK: Cells

  /// Makes the container of one call or one long-lived process: its marker, and its cgroup when the mechanism is
  /// cgroup (a cgroup that cannot be created leaves the call with the marker and process group only).
  func makeCell(limits: ResourceLimits) -> ContainmentCell {
    prepare()
    let number = cells.add(1, ordering: .relaxed).newValue
    let marker = hostMarker + "." + String(number)
    guard let base = cgroupFolder else { return ContainmentCell(owner: self, marker: marker, cgroup: nil) }
    // An empty cgroup of an earlier call, or a new one: mkdir and rmdir take the kernel's global cgroup lock,
    // which calls running side by side would otherwise queue on.
    // A kept cgroup has its cgroup.procs open, the limits it was given and its limit counters as its last call left
    // them: only what differs is written, and nothing is read.
    if let idle = idleCgroups.withLock({ $0.popLast() }) {
      let cgroup = CallCgroup(path: idle.path, procsFD: idle.procsFD)
      applyLimits(limits, to: cgroup.path, over: idle.limits)
      return ContainmentCell(owner: self, marker: marker, cgroup: cgroup, limits: limits, events: idle.events)
    }
    let path = base + "/c" + String(number)
    guard mkdir(path, 0o755) == 0 else { return ContainmentCell(owner: self, marker: marker, cgroup: nil) }
    let fd = open(path + "/cgroup.procs", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else {
      rmdir(path)
      return ContainmentCell(owner: self, marker: marker, cgroup: nil)
    }
    let cgroup = CallCgroup(path: path, procsFD: fd)
    applyLimits(limits, to: path, over: nil)
    // A new cgroup's counters start at zero.
    return ContainmentCell(owner: self, marker: marker, cgroup: cgroup, limits: limits, events: .zero)
  }

  /// Writes the memory and process limits of `limits` into the cgroup at `path`, those that differ from `previous`
  /// (all of them when `nil`), for the controllers this host has.
  private func applyLimits(_ limits: ResourceLimits, to path: String, over previous: ResourceLimits?) {
    if controllers.contains("memory"), previous == nil || previous?.memoryBytes != limits.memoryBytes {
      Self.write(path + "/memory.max", limits.memoryBytes.map(String.init) ?? "max")
      Self.write(path + "/memory.swap.max", limits.memoryBytes == nil ? "max" : "0")
    }
    if controllers.contains("pids"), previous == nil || previous?.processes != limits.processes {
      Self.write(path + "/pids.max", limits.processes.map(String.init) ?? "max")
    }
  }

  /// A call's cgroup: its folder and its `cgroup.procs`, open for children to join.
  struct CallCgroup: Sendable {
    var path: String
    var procsFD: Int32
  }

  /// An empty call cgroup kept for the next call: its folder, its `cgroup.procs` still open, the limits written
  /// into it and its limit counters when its last call ended (`nil` when they were not read).
  struct IdleCgroup: Sendable {
    var path: String
    var procsFD: Int32
    var limits: ResourceLimits
    var events: LimitEvents?
  }

  /// A cgroup's limit counters: `memory.events` oom_kill and `pids.events` max.
  struct LimitEvents: Sendable, Equatable {
    var oomKills: Int
    var pidsMax: Int
    static let zero = LimitEvents(oomKills: 0, pidsMax: 0)
  }

  /// The empty call cgroups kept for the next calls (at most ``idleLimit``).
  let idleCgroups = Mutex<[IdleCgroup]>([])
  static let idleLimit = 64

  /// Runs `spawn` (which returns a pid, or -1) and records the child as toolhost's, as one step: a sweep never sees a
  /// child of toolhost's that is not recorded yet (and would take it for an orphan).
  static func spawning(_ spawn: () -> Int32) -> Int32 {
    // Only a subreaper sweeps; without one, spawns need not wait for each other.
    guard isSubreaper.load(ordering: .acquiring) else {
      let pid = spawn()
      if pid > 0 {
        _ = liveSpawned.withLock { $0.insert(pid) }
        _ = recordedSpawns.withLock { $0.insert(pid) }
      }
      return pid
    }
    let pid = liveSpawned.withLock { live in
      let pid = spawn()
      if pid > 0 { live.insert(pid) }
      return pid
    }
    if pid > 0 { _ = recordedSpawns.withLock { $0.insert(pid) } }
    return pid
  }

  /// Whether this process has been made a child subreaper.
  static let isSubreaper = Atomic<Bool>(false)

  /// Forgets a child that its caller has reaped.
  static func reaped(_ pid: Int32) {
    _ = recordedSpawns.withLock { $0.remove(pid) }
    _ = liveSpawned.withLock { $0.remove(pid) }
  }

  // MARK: The subreaper's sweep

  /// Ends this host's orphaned children (re-parented to it as subreaper) that carry the cell's `marker` (any of this
  /// host's when `nil`) or no marker at all, with all their descendants, and reaps the ones that have ended.
  /// Repeats while it finds any, so that grandchildren re-parented by the kill are caught too. With a cgroup, these
  /// are the processes that moved themselves out of it: an orphan still in a call's cgroup belongs to that call (its
  /// `cgroup.kill`), whatever its environment says.
  func sweepOrphans(marker: String?) {
    let variable = "\(Self.markerVariable)="
    let wanted = variable + (marker.map { $0 + "\0" } ?? hostMarker + ".")
    for _ in 0..<20 {
      let adopted = Self.adoptedChildren()
      for zombie in adopted where zombie.state == "Z" { Self.reap(zombie.pid, within: .zero) }
      // Another call's (or another containment's) process is left to its own call. One being exec'd shows no
      // environment for a moment: it is looked at again rather than taken for one without a marker.
      var unsure = false
      let orphans = adopted.filter { child in
        guard child.state != "Z", !Self.isInCallCgroup(child.pid) else { return false }
        guard let environment = Self.environment(of: child.pid) else {
          unsure = true
          return false
        }
        return environment.contains(wanted) || !environment.contains(variable)
      }.map(\.pid)
      for child in orphans {
        for pid in Self.tree(of: child).reversed() { kill(pid, SIGKILL) }
        kill(child, SIGKILL)
        Self.reap(child, within: .milliseconds(200))
      }
      if orphans.isEmpty {
        guard unsure else { return }
        usleep(1000)
      }
    }
  }

  /// The folders of call cgroups of every containment of this process, as `/proc/PID/cgroup` names them, each with
  /// a slash at the end.
  private static let callCgroupFolders = Mutex<[String]>([])

  /// Whether the process `pid` is in a call's cgroup (of any containment of this process).
  private static func isInCallCgroup(_ pid: Int32) -> Bool {
    let folders = callCgroupFolders.withLock { $0 }
    guard !folders.isEmpty, let text = readSmallFile("/proc/\(pid)/cgroup") else { return false }
    return text.split(separator: "\n").contains { line in folders.contains { line.hasPrefix("0::" + $0) } }
  }

  /// Reaps the orphans re-parented to this process that have ended, and only those: children in another session
  /// that no containment of this process started.
  static func reapAdoptedZombies() {
    for zombie in adoptedChildren() where zombie.state == "Z" { reap(zombie.pid, within: .zero) }
  }

  /// This process's children that no containment of it started, in another session, among those of the thread that
  /// adopts orphans (``adoptiveChildren()``): the orphans it adopted as subreaper. (Every plugin starts in a session
  /// of its own and no descendant can come back to the host's, so a child in the host's session is one the embedding
  /// program started itself: not ours to touch.) Decided under the lock that spawns hold in a subreaper, so that no
  /// child of toolhost's is missing from `liveSpawned`; but first without it: when every child in another session is
  /// one toolhost started, there is nothing to decide, and a sweep (on an I/O thread) need not wait for a spawn under
  /// way, which can take a while on a busy machine.
  static func adoptedChildren() -> [(pid: Int32, state: Character)] {
    let session = getsid(0)
    let recorded = recordedSpawns.withLock { $0 }
    let unrecorded = adoptiveChildren().contains { child in
      !recorded.contains(child) && stat(of: child).map { $0.session != session } == true
    }
    guard unrecorded else { return [] }
    return liveSpawned.withLock { live in
      adoptiveChildren().compactMap { child in
        guard !live.contains(child), let stat = stat(of: child), stat.session != session else { return nil }
        return (child, stat.state)
      }
    }
  }

  /// A subreaper must reap the orphans it adopts, also between calls (a persistent plugin's orphans, processes a
  /// cgroup kill left to their parent): a thread of its own looks for them five times a second.
  private static func startOrphanReaper() {
    guard
      orphanReaperStarted.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        .exchanged
    else { return }
    let thread = Thread {
      while true {
        usleep(200_000)
        reapAdoptedZombies()
      }
    }
    thread.name = "toolhost-reaper"
    thread.stackSize = 256 << 10
    thread.start()
  }

  private static let orphanReaperStarted = Atomic<Bool>(false)

  /// The longest ``killCgroup(_:)`` waits for the cgroup's processes to be gone.
  static let emptyWait: Duration = .milliseconds(200)

  /// Ends every process in the cgroup `path` (`cgroup.kill`) and waits up to ``emptyWait`` until each process it
  /// held has exited (is gone or a zombie) and the cgroup is empty. A process that moved itself out of the cgroup
  /// is re-parented to the host, where the sweep finds it, only once its parent in the cgroup has exited; the
  /// cgroup's `populated` alone turns 0 a moment before that.
  static func killCgroup(_ path: String) {
    var waiting = members(of: path)
    write(path + "/cgroup.kill", "1")
    let deadline = ContinuousClock.now + emptyWait
    while ContinuousClock.now < deadline {
      waiting.removeAll { pid in stat(of: pid).map { $0.state == "Z" || $0.state == "X" } ?? true }
      if waiting.isEmpty && ContainmentCell.event(path, "cgroup.events", "populated") == 0 { return }
      usleep(500)
    }
  }

  /// The processes in the cgroup `path` (`cgroup.procs`).
  static func members(of path: String) -> [Int32] {
    (readSmallFile(path + "/cgroup.procs", limit: 1 << 20) ?? "").split(separator: "\n").compactMap { Int32($0) }
  }

  /// Waits up to `wait` for the child `pid` to end and reaps it.
  static func reap(_ pid: Int32, within wait: Duration) {
    let deadline = ContinuousClock.now + wait
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0, ContinuousClock.now < deadline { usleep(500) }
  }

  // MARK: The watchdog

  /// The watchdog's script: wait for the host's pipe to close; unless the host said `clean`, end every cgroup of
  /// this host and every process carrying its marker; then remove the cgroups. Arguments: the cgroup folder (or
  /// empty), the host marker, the marker variable.
  static let watchdogScript = #"""
    IFS= read -r said
    [ "$said" = clean ] && exit 0
    if [ -n "$1" ] && [ -d "$1" ]; then
      for c in "$1"/*/; do [ -f "$c/cgroup.kill" ] && echo 1 > "$c/cgroup.kill"; done
    fi
    for e in /proc/[0-9]*/environ; do
      if grep -qzF "$3=$2." "$e" 2>/dev/null; then
        p=${e#/proc/}; kill -9 "${p%/environ}" 2>/dev/null
      fi
    done
    if [ -n "$1" ] && [ -d "$1" ]; then
      for i in 1 2 3 4 5 6 7 8 9 10; do
        for c in "$1"/*/; do [ -d "$c" ] && rmdir "$c" 2>/dev/null; done
        rmdir "$1" 2>/dev/null && break
        sleep 0.1
      done
    fi
    """#

  /// Before the first cell: makes the cgroup folder, starts the watchdog and registers the clean exit.
  private func prepare() {
    let first = watchdog.withLock { fd -> Bool in
      guard fd == -1 else { return false }
      fd = -2  // prepared; a watchdog that cannot start is not tried again for every call
      if let folder = cgroupFolder, mkdir(folder, 0o755) == 0 {
        for c in controllers { Self.write(folder + "/cgroup.subtree_control", "+" + c) }
      }
      var pipe: [Int32] = [-1, -1]
      guard toolhost_pipe_cloexec(&pipe) == 0 else { return true }
      let arguments = [
        "-c", Self.watchdogScript, "toolhost-watchdog", cgroupFolder ?? "", hostMarker, Self.markerVariable,
      ]
      // Its output goes nowhere: a reader of toolhost's stdout must see the end of it when toolhost ends.
      let null = open("/dev/null", O_RDWR | O_CLOEXEC)
      let pid = try? spawnProcess(
        executable: "/bin/sh", arguments: arguments, environment: ["PATH": "/usr/bin:/bin"],
        workingDirectory: "/", stdio: (pipe[0], null, null), cell: nil, limits: .none)
      close(pipe[0])
      if null >= 0 { close(null) }
      if pid == nil { close(pipe[1]) } else { fd = pipe[1] }
      return true
    }
    guard first else { return }
    Self.withWatchdogs.withLock { $0.append(self) }
    if Self.exitHandlerInstalled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
      .exchanged
    {
      atexit { for c in Containment.withWatchdogs.withLock({ $0 }) { c.exitCleanly() } }
    }
  }

  private static let withWatchdogs = Mutex<[Containment]>([])
  private static let exitHandlerInstalled = Atomic<Bool>(false)

  /// At a normal exit: sweep, remove the cgroup folder, and tell the watchdog that nothing is left to do.
  func exitCleanly() {
    // The call cgroups c1, c2, ... (the folder's other entries are its control files).
    let cells = cgroupFolder.map { folder in
      ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
        .filter { $0.hasPrefix("c") && Int($0.dropFirst()) != nil }.map { folder + "/" + $0 }
    }
    for cell in cells ?? [] { Self.killCgroup(cell) }
    // What moved itself out of a cgroup, or out of a process group.
    if Self.isSubreaper.load(ordering: .acquiring) { sweepOrphans(marker: nil) }
    if let folder = cgroupFolder {
      for cell in cells ?? [] { rmdir(cell) }
      rmdir(folder)
    }
    let fd = watchdog.withLock { $0 }
    guard fd >= 0 else { return }
    let clean = cgroupFolder.map { access($0, F_OK) != 0 } ?? true
    // A watchdog that is gone must not kill the exiting host with SIGPIPE.
    toolhost_block_sigpipe_on_this_thread()
    if clean { _ = "clean\n".withCString { Glibc.write(fd, $0, 6) } }
    close(fd)
  }
}
