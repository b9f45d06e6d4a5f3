#define _GNU_SOURCE
#include "CToolhostSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

/* What the child reports through the error pipe when it cannot exec: the stage and errno. */
struct spawn_failure {
  int stage;
  int error;
};

/* Only async-signal-safe calls from here on: the child shares the parent's memory (vfork) and the parent has
   other threads whose locks may be held. */
static void child_fail(int fd, int stage) {
  struct spawn_failure f = {stage, errno};
  ssize_t ignored = write(fd, &f, sizeof f);
  (void)ignored;
  _exit(127);
}

/* Closes every descriptor from `first` on except `keep`: close_range(2) where the kernel has it, else one by one. */
static void close_all_from(int first, int keep) {
#if defined(__linux__) && defined(SYS_close_range)
  if (keep > first && syscall(SYS_close_range, first, keep - 1, 0) != 0) goto slow;
  if (syscall(SYS_close_range, keep + 1, ~0U, 0) != 0) goto slow;
  return;
slow:
#endif
  {
    struct rlimit r;
    long last = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY && r.rlim_cur < 65536 ? (long)r.rlim_cur : 65536;
    for (long fd = first; fd < last; fd++) {
      if (fd != keep) close((int)fd);
    }
  }
}

static int move_above(int fd, int floor) {
  if (fd < 0) return fd;
  return fcntl(fd, F_DUPFD_CLOEXEC, floor);
}

pid_t toolhost_spawn(const toolhost_spawn_attr *a, int *error_out, int *stage_out) {
  *error_out = 0;
  *stage_out = TOOLHOST_SPAWN_STAGE_NONE;
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    *error_out = errno;
    *stage_out = TOOLHOST_SPAWN_STAGE_PIPE;
    return -1;
  }
  /* No signal handler of the host may run in the child while it shares the host's memory. */
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
#if defined(__linux__)
  pid_t pid = vfork();
#else
  pid_t pid = fork();
#endif
  if (pid == 0) {
    /* The report pipe above stdio, so that setting up 0..2 cannot close it. */
    int rep = fcntl(report[1], F_DUPFD_CLOEXEC, 3);
    if (rep < 0) rep = report[1];
    /* Default actions for every signal: handlers of the host are not the plugin's, and ignored signals
       (SIGPIPE, or SIGINT while toolhost waits) must not stay ignored in the plugin. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++) {
      if (s == SIGKILL || s == SIGSTOP) continue;
      sigaction(s, &dfl, NULL);
    }
    /* Join the call's cgroup before anything else, so every descendant is born inside it. */
    if (a->cgroup_procs_fd >= 0) {
      if (write(a->cgroup_procs_fd, "0", 1) != 1) child_fail(rep, TOOLHOST_SPAWN_STAGE_CGROUP);
    }
    /* A session of its own: its own process group and no controlling terminal. */
    if (a->new_session && setsid() < 0) child_fail(rep, TOOLHOST_SPAWN_STAGE_SESSION);
    if (a->cwd && chdir(a->cwd) != 0) child_fail(rep, TOOLHOST_SPAWN_STAGE_CHDIR);
    /* Move the three descriptors out of 0..2 first, so that dup2 never overwrites one still needed. */
    int in = move_above(a->stdin_fd, 3), out = move_above(a->stdout_fd, 3), err = move_above(a->stderr_fd, 3);
    if ((a->stdin_fd >= 0 && in < 0) || (a->stdout_fd >= 0 && out < 0) || (a->stderr_fd >= 0 && err < 0))
      child_fail(rep, TOOLHOST_SPAWN_STAGE_STDIO);
    if ((in >= 0 && dup2(in, 0) < 0) || (out >= 0 && dup2(out, 1) < 0) || (err >= 0 && dup2(err, 2) < 0))
      child_fail(rep, TOOLHOST_SPAWN_STAGE_STDIO);
    /* Confinement before the descriptors are closed (the ruleset is one of them): no new privileges (no set-user-id
       program undoes it), the Landlock domain, then the socket filter. */
#if defined(__linux__)
    if (a->landlock_ruleset_fd >= 0 || a->deny_sockets) {
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(rep, TOOLHOST_SPAWN_STAGE_CONFINE);
      /* No capabilities after exec, even for root: CAP_SYS_PTRACE would read the host's /proc files (its
         environment) past its non-dumpable setting, and CAP_SYS_MODULE or CAP_SYS_ADMIN would step out of any
         sandbox. Dropping from the bounding set needs CAP_SETPCAP (a process without it fails here, and its sets
         are emptied below). */
      for (int cap = 0; cap < 64; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;
      }
      /* And every set the process holds: ambient capabilities (kept across exec by a non-root process) and the
         inheritable, permitted and effective sets. Lowering them is always allowed. */
      if (toolhost_drop_capabilities() != 0) child_fail(rep, TOOLHOST_SPAWN_STAGE_CONFINE);
      if (a->landlock_ruleset_fd >= 0) {
        /* The child's own /proc/PID (its /proc/self), which the parent cannot name before the child exists. The
           ruleset is this spawn's alone. */
        if (toolhost_landlock_allow_path(a->landlock_ruleset_fd, a->landlock_abi, "/proc/self", 0) != 0)
          child_fail(rep, TOOLHOST_SPAWN_STAGE_CONFINE);
        if (syscall(446 /* landlock_restrict_self */, a->landlock_ruleset_fd, 0) != 0)
          child_fail(rep, TOOLHOST_SPAWN_STAGE_CONFINE);
      }
      if (a->deny_sockets && toolhost_install_socket_filter(a->deny_sockets) != 0)
        child_fail(rep, TOOLHOST_SPAWN_STAGE_CONFINE);
    }
#else
    if (a->landlock_ruleset_fd >= 0 || a->deny_sockets) {
      errno = ENOSYS;
      child_fail(rep, TOOLHOST_SPAWN_STAGE_CONFINE);
    }
#endif
    /* Nothing of the host's reaches the plugin but stdio: descriptors opened without close-on-exec (by the
       embedding program, or a library) are closed; only the report pipe stays, until exec closes it. */
    close_all_from(3, rep);
    /* Limits last: a low RLIMIT_NOFILE must not stop the descriptor moves above. */
    for (int i = 0; i < a->limit_count; i++) {
      struct rlimit r = {a->limits[i].soft, a->limits[i].hard};
      if (setrlimit(a->limits[i].resource, &r) != 0) child_fail(rep, TOOLHOST_SPAWN_STAGE_LIMITS);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(a->path, a->argv, a->envp);
    child_fail(rep, TOOLHOST_SPAWN_STAGE_EXEC);
  }
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &saved, NULL);
  close(report[1]);
  if (pid < 0) {
    close(report[0]);
    *error_out = fork_errno;
    *stage_out = TOOLHOST_SPAWN_STAGE_FORK;
    return -1;
  }
  struct spawn_failure f;
  ssize_t n;
  do {
    n = read(report[0], &f, sizeof f);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == (ssize_t)sizeof f) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    *error_out = f.error;
    *stage_out = f.stage;
    return -1;
  }
  return pid;
}

int toolhost_set_child_subreaper(void) {
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
  return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_wait_exited(pid_t pid, int *status_out, int *signal_out, struct rusage *usage) {
  int status = 0;
  pid_t r;
  do {
    r = wait4(pid, &status, WNOHANG, usage);
  } while (r < 0 && errno == EINTR);
  if (r < 0 && errno == ECHILD) {
    /* Someone else reaped it (a SIGCHLD handler of the embedding program): it has ended, how is unknown. */
    *status_out = 0;
    *signal_out = SIGKILL;
    return 1;
  }
  if (r <= 0) return (int)r;
  if (WIFEXITED(status)) {
    *status_out = WEXITSTATUS(status);
    *signal_out = 0;
  } else if (WIFSIGNALED(status)) {
    *status_out = 0;
    *signal_out = WTERMSIG(status);
  } else {
    return 0;
  }
  return 1;
}
