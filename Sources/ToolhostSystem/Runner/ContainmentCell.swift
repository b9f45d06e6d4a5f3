import CToolhostSupport
import Foundation
import Synchronization

/// The container of one call or one long-lived process: its marker, and its cgroup when there is one.
final class ContainmentCell: Sendable {
  let owner: Containment
  /// The value of `TOOLHOST_MARKER` for the processes of this cell.
  let marker: String
  private let callCgroup: Containment.CallCgroup?
  /// The limits written into the cgroup.
  private let limits: ResourceLimits
  /// The cgroup's limit counters when the cell began: a reused cgroup keeps its earlier calls' counts.
  private let eventsAtStart: Containment.LimitEvents
  /// The counters as ``cgroupLimitHit`` last read them, handed on with the cgroup when it is kept.
  private let eventsAtEnd = Mutex<Containment.LimitEvents?>(nil)

  /// A cell with `cgroup` (or none), given `limits`, its counters at `events` (read here when `nil`).
  init(
    owner: Containment, marker: String, cgroup: Containment.CallCgroup?, limits: ResourceLimits = ResourceLimits(),
    events: Containment.LimitEvents? = nil
  ) {
    self.owner = owner
    self.marker = marker
    self.callCgroup = cgroup
    self.limits = limits
    if let path = cgroup?.path, !owner.controllers.isEmpty {
      eventsAtStart = events ?? Self.limitEvents(path)
    } else {
      eventsAtStart = .zero
    }
  }

  /// The limit counters of the cgroup at `path`.
  private static func limitEvents(_ path: String) -> Containment.LimitEvents {
    Containment.LimitEvents(
      oomKills: event(path, "memory.events", "oom_kill"), pidsMax: event(path, "pids.events", "max"))
  }

  /// The cell's cgroup folder, if it has one.
  var cgroup: String? { callCgroup?.path }

  /// The descriptor the child writes itself into (`cgroup.procs`), or -1.
  var joinFD: Int32 { callCgroup?.procsFD ?? -1 }

  /// Sends `signal` (SIGTERM; ``killAll(leader:)`` is for SIGKILL) to every process of the cell: the process group
  /// `leader`, and its cgroup's members.
  func signalAll(_ signal: Int32, leader: Int32) {
    if leader > 0 { kill(-leader, signal) }
    for pid in members() { kill(pid, signal) }
  }

  /// Ends every process of the cell at once: the process group, and the cgroup's processes
  /// (``Containment/killCgroup(_:)``, which waits briefly for them to be gone); then the subreaper's sweep of the
  /// orphans carrying the cell's marker or none, which with a cgroup are the processes that moved themselves out.
  func killAll(leader: Int32) {
    if leader > 0 { kill(-leader, SIGKILL) }
    if let cgroup, isPopulated { Containment.killCgroup(cgroup) }
    if Containment.isSubreaper.load(ordering: .acquiring) { owner.sweepOrphans(marker: marker) }
  }

  /// The processes in the cell's cgroup (empty without one).
  func members() -> [Int32] { cgroup.map(Containment.members(of:)) ?? [] }

  /// Whether a process is still alive in the cell's cgroup (`cgroup.events`).
  var isPopulated: Bool { event("cgroup.events", "populated") != 0 }

  /// A counter of the cgroup's `memory.events`, `pids.events` or `cgroup.events`, 0 when absent.
  func event(_ file: String, _ key: String) -> Int { Self.event(cgroup, file, key) }

  static func event(_ cgroup: String?, _ file: String, _ key: String) -> Int {
    guard let cgroup else { return 0 }
    return Int(max(0, toolhost_read_key_value(cgroup + "/" + file, key)))
  }

  /// The limit the cgroup saw exceeded during this cell, if any.
  var cgroupLimitHit: ResourceLimits.Kind? {
    guard let cgroup, !owner.controllers.isEmpty else { return nil }
    let now = Self.limitEvents(cgroup)
    eventsAtEnd.withLock { $0 = now }
    if now.oomKills > eventsAtStart.oomKills { return .memory }
    if now.pidsMax > eventsAtStart.pidsMax { return .processes }
    return nil
  }

  /// Gives the cgroup back: kept for the next call when it is empty, otherwise ended and removed once its
  /// processes are gone (retrying briefly in the background while they exit).
  package func release() {
    guard let callCgroup else { return }
    let path = callCgroup.path
    if !isPopulated {
      let events = owner.controllers.isEmpty ? .zero : eventsAtEnd.withLock { $0 }
      let kept = owner.idleCgroups.withLock { idle in
        guard idle.count < Containment.idleLimit else { return false }
        idle.append(
          Containment.IdleCgroup(path: path, procsFD: callCgroup.procsFD, limits: limits, events: events))
        return true
      }
      if kept { return }
    }
    close(callCgroup.procsFD)
    if rmdir(path) == 0 { return }
    Containment.write(path + "/cgroup.kill", "1")
    DispatchQueue.global(qos: .utility).async {
      for _ in 0..<200 {
        if rmdir(path) == 0 || errno == ENOENT { return }
        usleep(5000)
      }
    }
  }
}
