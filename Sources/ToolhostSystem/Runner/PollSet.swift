import Foundation

/// Which descriptor of a child (or the loop's own wake-up pipe) a poll entry is.
enum ChildStream {
  case wake
  case input
  case output
  case error
  case exit
}

/// The descriptors one poll(2) call of an I/O loop watches: its wake-up pipe and, for each child, the pipes still
/// open and its pidfd, each with the child it belongs to.
struct PollSet<Owner> {
  private var fds: [pollfd] = []
  private var owners: [(owner: Owner?, stream: ChildStream)] = []

  /// Starts a new set that watches the wake-up pipe `wake`.
  mutating func reset(wake: Int32) {
    fds.removeAll(keepingCapacity: true)
    owners.removeAll(keepingCapacity: true)
    add(wake, POLLIN, nil, .wake)
  }

  /// Watches a child's descriptors that are open (>= 0): stdin for writing, stdout, stderr and the pidfd for
  /// reading.
  mutating func watch(_ owner: Owner, stdin: Int32, stdout: Int32, stderr: Int32, pidfd: Int32) {
    if stdin >= 0 { add(stdin, POLLOUT, owner, .input) }
    // Stderr before stdout: when both are ready, what a child logged before its reply is handed on before the
    // reply (a call's log sink is gone once its reply is in).
    if stderr >= 0 { add(stderr, POLLIN, owner, .error) }
    if stdout >= 0 { add(stdout, POLLIN, owner, .output) }
    if pidfd >= 0 { add(pidfd, POLLIN, owner, .exit) }
  }

  private mutating func add(_ fd: Int32, _ events: Int32, _ owner: Owner?, _ stream: ChildStream) {
    fds.append(pollfd(fd: fd, events: Int16(events), revents: 0))
    owners.append((owner, stream))
  }

  /// Waits until a descriptor is ready or `deadline` passes (`nil`: no limit; at most a minute at a time); `now`
  /// polls without waiting. Returns poll(2)'s count.
  mutating func poll(until deadline: ContinuousClock.Instant?, now: Bool = false) -> Int32 {
    var timeoutMS: Int32 = -1
    if now {
      timeoutMS = 0
    } else if let deadline {
      let left = ContinuousClock.now.duration(to: deadline)
      timeoutMS = left <= .zero ? 0 : left >= .seconds(60) ? 60_000 : Int32(left.millisecondsRoundedUp)
    }
    return Glibc.poll(&fds, nfds_t(fds.count), timeoutMS)
  }

  /// Calls `body` for each ready entry, in the order they were added.
  func forEachReady(_ body: (Owner?, ChildStream) -> Void) {
    for i in fds.indices where fds[i].revents != 0 { body(owners[i].owner, owners[i].stream) }
  }
}

/// Reads a non-blocking descriptor until it would block, handing each chunk to `body`; at end of file or on an
/// error the descriptor is closed (set to -1). `body` may close it too, which ends the reading.
///
/// With `stopAtShortRead`, a read that did not fill the buffer ends the reading without the read that would say
/// EAGAIN (poll says when there is more): a reply's path is one system call shorter.
func readAvailable(
  _ fd: inout Int32, into buffer: inout [UInt8], stopAtShortRead: Bool = false,
  _ body: (ArraySlice<UInt8>, inout Int32) -> Void
) {
  while fd >= 0 {
    let n = read(fd, &buffer, buffer.count)
    if n > 0 {
      body(buffer[0..<n], &fd)
      if stopAtShortRead && n < buffer.count { return }
    } else if n < 0 && errno == EINTR {
      continue
    } else if n < 0 && errno == EAGAIN {
      return
    } else {
      closeFD(&fd)
    }
  }
}
