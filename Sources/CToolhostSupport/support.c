#define _GNU_SOURCE
#include "CToolhostSupport.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

int toolhost_pidfd_open(pid_t pid) {
#if defined(__linux__) && defined(SYS_pidfd_open)
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_block_sigpipe_on_this_thread(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int toolhost_pipe_cloexec(int fds[2]) {
#if defined(__linux__)
  return pipe2(fds, O_CLOEXEC);
#else
  if (pipe(fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return 0;
#endif
}

int toolhost_set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return -1;
  return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

int toolhost_count_open_fds(void) {
#if defined(__linux__)
  DIR *d = opendir("/proc/self/fd");
#else
  DIR *d = opendir("/dev/fd");
#endif
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] != '.') n++;
  }
  closedir(d);
  return n - 1; /* the directory's own descriptor */
}

int toolhost_set_not_dumpable(void) {
#if defined(__linux__)
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}
