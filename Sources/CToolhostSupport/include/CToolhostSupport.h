#ifndef TOOLHOST_SUPPORT_H
#define TOOLHOST_SUPPORT_H
#include <sys/types.h>
#include <signal.h>
#include <sys/resource.h>

/// pidfd_open(2): a descriptor that becomes readable when `pid` exits. -1 with errno where unsupported.
int toolhost_pidfd_open(pid_t pid);

/// Blocks SIGPIPE on the calling thread, so a write to a closed pipe fails with EPIPE instead of killing the host.
int toolhost_block_sigpipe_on_this_thread(void);
/// Creates a pipe whose both ends are close-on-exec.
int toolhost_pipe_cloexec(int fds[2]);
/// Sets O_NONBLOCK on a descriptor.
int toolhost_set_nonblocking(int fd);

/* The children of every thread of `pid` (/proc/PID/task/N/children), at most `capacity` of them into `out`.
   Returns how many there are (more than `capacity` when `out` was too small: call again with room for that many),
   or -1 when the task folder cannot be read. */
int toolhost_children_of(pid_t pid, pid_t *out, int capacity);

/* The children of this process that an orphan re-parented to it (as subreaper) would be among, at most `capacity`
   of them into `out`: the kernel gives an orphan to the first thread of its new parent that has not exited, which
   is the main thread while it runs, so only the main thread's children are read; every thread's when the main
   thread has ended (a zombie in /proc/self/stat) or cannot be read. Returns what toolhost_children_of does. */
int toolhost_adoptive_children(pid_t *out, int capacity);

/* The value of the line "KEY VALUE" of a small key-value file (cgroup.events, memory.events, pids.events): the
   value, 0 when the file has no such line, -1 when it cannot be read. */
long long toolhost_read_key_value(const char *path, const char *key);
/// The number of open descriptors of this process (counts /proc/self/fd or /dev/fd entries), -1 on failure.
int toolhost_count_open_fds(void);

/// Where a spawn failed (reported with errno).
enum {
  TOOLHOST_SPAWN_STAGE_NONE = 0,
  TOOLHOST_SPAWN_STAGE_PIPE = 1,
  TOOLHOST_SPAWN_STAGE_FORK = 2,
  TOOLHOST_SPAWN_STAGE_CGROUP = 3,
  TOOLHOST_SPAWN_STAGE_SESSION = 4,
  TOOLHOST_SPAWN_STAGE_LIMITS = 5,
  TOOLHOST_SPAWN_STAGE_CHDIR = 6,
  TOOLHOST_SPAWN_STAGE_STDIO = 7,
  TOOLHOST_SPAWN_STAGE_EXEC = 8,
  TOOLHOST_SPAWN_STAGE_CONFINE = 9,
};

/// One resource limit for the child (setrlimit).
typedef struct {
  int resource;
  rlim_t soft;
  rlim_t hard;
} toolhost_rlimit;

/// What toolhost_spawn starts. Every pointer must stay valid for the call.
typedef struct {
  const char *path;
  char *const *argv;
  char *const *envp;
  /// The child's working directory, or NULL for the host's.
  const char *cwd;
  /// The child's stdin, stdout and stderr (-1 leaves the host's).
  int stdin_fd, stdout_fd, stderr_fd;
  /// An open descriptor of a cgroup's cgroup.procs that the child joins before anything else, or -1.
  int cgroup_procs_fd;
  /// Non-zero: the child calls setsid() (a new session and process group, no controlling terminal).
  int new_session;
  toolhost_rlimit limits[8];
  int limit_count;
  /// A Landlock ruleset (toolhost_landlock_ruleset) the child restricts itself to before exec, or -1 for none. The
  /// child first adds its own /proc/PID folder to it (to read), so it reads its /proc/self and no other process's.
  int landlock_ruleset_fd;
  /// The Landlock ABI the ruleset was made for.
  int landlock_abi;
  /// The mode of the filter (toolhost_install_socket_filter) the child installs before exec: 1 no sockets, 2 TCP
  /// and UDP, 3 any socket; 0 none.
  int deny_sockets;
} toolhost_spawn_attr;

/// Starts a child the way toolhost runs plugins: default signal actions and an empty mask, the cgroup joined, a new
/// session, the resource limits, the working directory, stdio, then execve. The host's signals are blocked for the
/// moment of the vfork. Returns the pid, or -1 with *error_out (errno) and *stage_out (TOOLHOST_SPAWN_STAGE_*) set;
/// a child that failed before exec has been reaped.
pid_t toolhost_spawn(const toolhost_spawn_attr *attr, int *error_out, int *stage_out);

/// The Landlock ABI version this kernel offers (1 and up), or -1 with errno (ENOSYS: not built in; EOPNOTSUPP:
/// built in but turned off).
int toolhost_landlock_abi(void);
/// A new Landlock ruleset that handles every file-system right of `abi`; with `handle_tcp`, TCP bind and connect too
/// (ABI 4 and up, EOPNOTSUPP below); with `scope` 1, signals to processes outside the domain are refused, with 2
/// connections to abstract Unix sockets outside it as well (ABI 6 and up; ignored below). A close-on-exec
/// descriptor, or -1 with errno.
int toolhost_landlock_ruleset(int abi, int handle_tcp, int scope);
/// Allows `path` (a folder and what is beneath it, or a file) in `ruleset`: reading and executing, or with `write`
/// every right. A character device also gets writes and ioctls. 0, or -1 with errno (ENOENT when it does not exist).
int toolhost_landlock_allow_path(int ruleset, int abi, const char *path, int write);
/// Allows TCP connections to `port` in a ruleset that handles TCP. 0, or -1 with errno.
int toolhost_landlock_allow_tcp_port(int ruleset, unsigned port);
/// Empties the calling thread's ambient, inheritable, permitted and effective capabilities. 0, or -1 with errno.
int toolhost_drop_capabilities(void);
/// 1 when this kernel and architecture take the socket filter, else 0.
int toolhost_socket_filter_supported(void);
/// Installs a seccomp filter on the calling thread; needs no_new_privs set first. In every mode the calls that change
/// a file's mode or owner (chmod, chown and kin) fail with EPERM. Mode 1: socket(2) and io_uring_setup(2) fail with
/// EACCES. Mode 2: only TCP and UDP sockets of AF_INET and AF_INET6, no listen(2) and no TCP Fast Open. Mode 3:
/// nothing more. 0, or -1 with errno.
int toolhost_install_socket_filter(int mode);

/// Makes the host a child subreaper (orphaned descendants are re-parented to it). -1 with errno where unsupported.
int toolhost_set_child_subreaper(void);

/// wait4(pid, WNOHANG): 1 with the exit status or the signal (and the child's resource usage) once it has ended
/// (SIGKILL when someone else reaped it already), 0 while it runs, -1 with errno on another error.
int toolhost_wait_exited(pid_t pid, int *status_out, int *signal_out, struct rusage *usage);

/// prctl(PR_SET_DUMPABLE, 0): other processes of the same user can no longer read this process's /proc files that
/// need ptrace access (environ, mem, fd links) or attach to it, and it leaves no core dump. 0, or -1 with errno
/// (ENOSYS where there is no such setting).
int toolhost_set_not_dumpable(void);

/// The git commit toolhost was built from (defined by Package.swift from SwiftPM's git information), or "" when the
/// build was not made in a git checkout.
const char *toolhost_build_commit(void);
/// 1 when the checkout had uncommitted changes at build time, else 0.
int toolhost_build_uncommitted_changes(void);

#endif
