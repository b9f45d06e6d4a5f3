import Foundation

// Containment's set-up: the cgroup v2 folder the calls' cgroups are made in.

extension Containment {
  struct CgroupFailure: Error {
    var reason: String
  }

  /// Finds this process's cgroup v2 folder and creates `toolhost-<marker>` in it, enabling the `memory` and `pids`
  /// controllers for the calls' cgroups where the parent offers them.
  static func makeCgroupFolder(marker: String) -> Result<
    (path: String, relative: String, controllers: Set<String>), CgroupFailure
  > {
    guard let mount = cgroup2Mount() else { return .failure(CgroupFailure(reason: "no cgroup v2 file system mounted")) }
    guard let own = readSmallFile("/proc/self/cgroup")?.split(separator: "\n").first(where: { $0.hasPrefix("0::") })
    else { return .failure(CgroupFailure(reason: "this process has no cgroup v2")) }
    var relative = String(own.dropFirst(3))
    if relative == "/" { relative = "" }
    let parent = mount + relative
    let folder = parent + "/toolhost-" + marker
    guard mkdir(folder, 0o755) == 0 else {
      return .failure(
        CgroupFailure(reason: "cannot create a cgroup in \(parent): \(String(cString: strerror(errno)))"))
    }
    guard access(folder + "/cgroup.kill", W_OK) == 0 else {
      rmdir(folder)
      return .failure(CgroupFailure(reason: "the kernel has no cgroup.kill (Linux 5.14 or newer needed)"))
    }
    let offered = Set(
      (readSmallFile(folder + "/cgroup.controllers") ?? "").split(whereSeparator: \.isWhitespace).map(String.init))
    var enabled: Set<String> = []
    for c in ["memory", "pids"] where offered.contains(c) {
      if write(folder + "/cgroup.subtree_control", "+" + c) { enabled.insert(c) }
    }
    return .success((folder, relative + "/toolhost-" + marker, enabled))
  }

  /// Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on hybrid systems).
  static func cgroup2Mount() -> String? {
    guard let info = readSmallFile("/proc/self/mountinfo", limit: 1 << 20) else { return nil }
    for line in info.split(separator: "\n") {
      let parts = line.split(separator: " ")
      guard let dash = parts.firstIndex(of: "-"), dash + 1 < parts.count, parts[dash + 1] == "cgroup2",
        parts.count > 4
      else { continue }
      return String(parts[4])
    }
    return nil
  }
}
