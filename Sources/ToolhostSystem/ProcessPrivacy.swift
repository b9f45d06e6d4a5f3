import CToolhostSupport

/// Keeps the host's memory and environment from the plugins it runs, which are processes of the same user.
///
/// Plugins get a filtered environment, but a process of the same user could otherwise read the host's own through
/// `/proc/PPID/environ` (an API key among it), its memory through `/proc/PPID/mem`, or attach a debugger.
/// ``hideFromSameUser()`` makes the process non-dumpable (Linux's `PR_SET_DUMPABLE` 0): its `/proc` files that need
/// ptrace access then belong to root and are refused to every unprivileged process (one without `CAP_SYS_PTRACE`
/// or the like), and it leaves no core dump. The process itself still reads its own `/proc/self` files. The setting is reset by `execve`, so every
/// program a host starts (plugins, the model server) is dumpable again unless it sets it itself.
///
/// ```swift
/// ProcessPrivacy.hideFromSameUser()  // first thing in main, before any secret is read
/// ```
public enum ProcessPrivacy {
  /// Makes this process non-dumpable; call it early, before the process holds secrets others may read.
  ///
  /// - Returns: whether the setting was made (false where the system has none, as on macOS).
  @discardableResult
  public static func hideFromSameUser() -> Bool {
    toolhost_set_not_dumpable() == 0
  }
}
