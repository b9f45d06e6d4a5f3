import CToolhostSupport
import Foundation

/// Starts a child as toolhost runs every plugin: default signal actions and an empty signal mask, a session of its
/// own (no controlling terminal), the cell's cgroup joined before anything runs, the resource limits, the working
/// directory and the given stdio, `TOOLHOST_MARKER` set to the cell's marker, and the ``Confinement`` when there is
/// one.
///
/// The child is not reaped by anyone but its caller (through ``toolhost_wait_exited``); it is remembered as started
/// by toolhost until ``Containment/reaped(_:)``.
/// - Throws: ``ProcessLaunchError`` with the reason in words when the child cannot be started.
func spawnProcess(
  executable: String, arguments: [String], environment: [String: String], workingDirectory: String?,
  stdio: (in: Int32, out: Int32, err: Int32), cell: ContainmentCell?, limits: ResourceLimits,
  confinement: Confinement? = nil
) throws(ProcessLaunchError) -> Int32 {
  var ruleset: Int32 = -1
  var abi: Int32 = 0
  if let confinement {
    let support = ConfinementSupport.current
    if let problem = support.problem(for: confinement) {
      throw ProcessLaunchError(executable: executable, reason: "it cannot be confined here: \(problem)")
    }
    // problem(for:) is nil only with Landlock.
    abi = support.landlockABI ?? 0
    ruleset = try confinement.makeRuleset(abi: abi, executable: executable)
  }
  defer { if ruleset >= 0 { close(ruleset) } }
  var environment = environment
  if let cell { environment[Containment.markerVariable] = cell.marker }
  let argv = CStrings([executable] + arguments)
  let envp = CStrings(environment.map { "\($0.key)=\($0.value)" })
  var attr = toolhost_spawn_attr()
  attr.stdin_fd = stdio.in
  attr.stdout_fd = stdio.out
  attr.stderr_fd = stdio.err
  attr.cgroup_procs_fd = cell?.joinFD ?? -1
  attr.new_session = 1
  attr.landlock_ruleset_fd = ruleset
  attr.landlock_abi = abi
  attr.deny_sockets =
    switch confinement?.network {
    case .some(.none): 1
    case .some(.tcpPorts): 2
    case .some(.unrestricted): 3
    case nil: 0
    }
  let rlimits = limits.rlimits
  withUnsafeMutableBytes(of: &attr.limits) { raw in
    let slots = raw.bindMemory(to: toolhost_rlimit.self)
    for (i, r) in rlimits.prefix(slots.count).enumerated() { slots[i] = r }
  }
  attr.limit_count = Int32(min(rlimits.count, 8))
  var error: Int32 = 0
  var stage: Int32 = 0
  let pid = executable.withCString { path in
    (workingDirectory ?? "").withCString { cwd in
      argv.withPointers { argvPointer in
        envp.withPointers { envpPointer in
          attr.path = path
          attr.cwd = workingDirectory == nil ? nil : cwd
          attr.argv = argvPointer
          attr.envp = envpPointer
          return Containment.spawning { toolhost_spawn(&attr, &error, &stage) }
        }
      }
    }
  }
  guard pid > 0 else {
    throw ProcessLaunchError(
      executable: executable,
      reason: launchReason(
        errno: error, stage: stage, executable: executable, workingDirectory: workingDirectory,
        environment: environment, arguments: arguments))
  }
  return pid
}

/// A child started with pipes of its own: its pid, a pidfd when the system has them (-1 otherwise), its containment
/// cell, and the parent's ends of its stdio, non-blocking and close-on-exec.
struct SpawnedChild {
  let pid: Int32
  let pidfd: Int32
  let cell: ContainmentCell
  let stdin: Int32
  let stdout: Int32
  let stderr: Int32
}

/// How a child's stdin is made.
enum ChildInput {
  /// A pipe.
  case pipe
  /// One end of a Unix stream socket pair, which the parent writes with `send(MSG_NOSIGNAL | MSG_DONTWAIT)` from any
  /// thread: no SIGPIPE, no blocking. The child reads it as it reads a pipe.
  case socket
}

/// Makes a child's stdio, starts it in a new cell of `containment` (``spawnProcess``), confined when `confinement`
/// is given, and keeps only the parent's ends: the one way both runners start a child.
///
/// - Throws: ``ProcessLaunchError`` when pipes cannot be made or the child cannot be started; then every descriptor
///   made here is closed and the cell released.
func spawnChild(
  executable: String, arguments: [String], environment: [String: String], workingDirectory: String?,
  input: ChildInput, containment: Containment, limits: ResourceLimits, confinement: Confinement?
) throws(ProcessLaunchError) -> SpawnedChild {
  // stdin, stdout, stderr: [child's end, parent's end] after the swap below for stdin.
  var pipes: [[Int32]] = Array(repeating: [-1, -1], count: 3)
  func closeAll() {
    for pair in pipes { for fd in pair where fd >= 0 { close(fd) } }
  }
  switch input {
  case .pipe:
    if toolhost_pipe_cloexec(&pipes[0]) != 0 {
      throw ProcessLaunchError(
        executable: executable, reason: "cannot create pipes: \(String(cString: strerror(errno)))")
    }
  case .socket:
    var pair: [Int32] = [-1, -1]
    let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    if socketpair(AF_UNIX, socketType, 0, &pair) != 0 {
      throw ProcessLaunchError(
        executable: executable, reason: "cannot create a socket pair: \(String(cString: strerror(errno)))")
    }
    // The child only reads its stdin; the parent only writes.
    _ = Glibc.shutdown(pair[1], Int32(SHUT_RD))
    pipes[0] = pair
  }
  for i in 1..<3 where toolhost_pipe_cloexec(&pipes[i]) != 0 {
    let reason = String(cString: strerror(errno))
    closeAll()
    throw ProcessLaunchError(executable: executable, reason: "cannot create pipes: \(reason)")
  }
  let cell = containment.makeCell(limits: limits)
  let pid: Int32
  do {
    pid = try spawnProcess(
      executable: executable, arguments: arguments, environment: environment, workingDirectory: workingDirectory,
      stdio: (pipes[0][0], pipes[1][1], pipes[2][1]), cell: cell, limits: limits, confinement: confinement)
  } catch {
    closeAll()
    cell.release()
    throw error
  }
  // The child has its own copies now.
  close(pipes[0][0])
  close(pipes[1][1])
  close(pipes[2][1])
  for fd in [pipes[0][1], pipes[1][0], pipes[2][0]] { toolhost_set_nonblocking(fd) }
  return SpawnedChild(
    pid: pid, pidfd: toolhost_pidfd_open(pid), cell: cell, stdin: pipes[0][1], stdout: pipes[1][0],
    stderr: pipes[2][0])
}

/// Reaps the child `pid` if it has ended: how it ended and the CPU time it used; `nil` while it runs.
func reapChild(_ pid: Int32) -> (termination: ProcessOutcome.Termination, cpuTime: Duration)? {
  var status: Int32 = 0
  var signal: Int32 = 0
  var usage = rusage()
  guard toolhost_wait_exited(pid, &status, &signal, &usage) == 1 else { return nil }
  Containment.reaped(pid)
  let cpuTime =
    Duration.seconds(Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec))
    + .microseconds(Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec))
  return (signal != 0 ? .signaled(signal) : .exited(status), cpuTime)
}

/// Words for a failed spawn that say what to do.
func launchReason(
  errno code: Int32, stage: Int32, executable: String, workingDirectory: String?, environment: [String: String],
  arguments: [String]
) -> String {
  let system = String(cString: strerror(code))
  switch Int(stage) {
  case Int(TOOLHOST_SPAWN_STAGE_PIPE), Int(TOOLHOST_SPAWN_STAGE_FORK):
    return "the system could not start a process: \(system)"
  case Int(TOOLHOST_SPAWN_STAGE_CGROUP): return "could not join the call's cgroup: \(system)"
  case Int(TOOLHOST_SPAWN_STAGE_SESSION): return "could not start a new session: \(system)"
  case Int(TOOLHOST_SPAWN_STAGE_LIMITS): return "could not set its resource limits: \(system)"
  case Int(TOOLHOST_SPAWN_STAGE_CHDIR):
    return "working directory \(workingDirectory ?? "?") cannot be entered: \(system)"
  case Int(TOOLHOST_SPAWN_STAGE_STDIO): return "could not set up its standard input and output: \(system)"
  case Int(TOOLHOST_SPAWN_STAGE_CONFINE): return "could not confine it: \(system)"
  default: break
  }
  var info = stat()
  guard stat(executable, &info) == 0 else { return "no such file" }
  if info.st_mode & S_IFMT == S_IFDIR { return "it is a directory" }
  // access(X_OK) succeeds for root on files with no execute bit at all, so look at the mode bits.
  if info.st_mode & 0o111 == 0 || access(executable, X_OK) != 0 { return "not executable (chmod +x \(executable))" }
  if code == E2BIG {
    let size =
      environment.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count + 2 }
      + arguments.reduce(0) { $0 + $1.utf8.count + 1 }
    return "its arguments and environment (\(byteCountText(size))) are more than the system allows"
  }
  if code == ENOENT || code == ENOEXEC {
    return "the interpreter named on its #! line was not found or it is not a valid executable"
  }
  return system
}

/// NUL-terminated copies of strings and a NULL-terminated array of pointers to them, for execve.
final class CStrings {
  private var pointers: [UnsafeMutablePointer<CChar>?]

  init(_ strings: [String]) {
    pointers = strings.map { strdup($0) } + [nil]
  }

  deinit {
    for p in pointers { free(p) }
  }

  func withPointers<R>(_ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
  }
}

/// Starts a program that puts itself in the background (it forks and its first process exits at once), in a
/// session of its own and outside any call's containment, and waits for that first process to exit. For the local
/// model's shared server, which must outlive toolhost.
///
/// - Returns: how the first process ended.
/// - Throws: ``ProcessLaunchError`` when it cannot be started.
package func runDaemonizing(
  executable: String, arguments: [String], environment: [String: String], workingDirectory: String?,
  stdio: (in: Int32, out: Int32, err: Int32)
) async throws(ProcessLaunchError) -> ProcessOutcome.Termination {
  // Its second process is re-parented to toolhost (a subreaper) when the first exits: a marker of no call keeps the
  // sweeps from ending it, and the watchdog too.
  var environment = environment
  environment[Containment.markerVariable] = Containment.detachedMarker
  let pid = try spawnProcess(
    executable: executable, arguments: arguments, environment: environment, workingDirectory: workingDirectory,
    stdio: stdio, cell: nil, limits: ResourceLimits())
  while true {
    if let (termination, _) = reapChild(pid) { return termination }
    try? await Task.sleep(for: .milliseconds(10))
  }
}
