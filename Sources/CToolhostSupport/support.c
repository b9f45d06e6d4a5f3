#define _GNU_SOURCE
#include "CToolhostSupport.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Reads a whole small file into buf (NUL-terminated); the length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = 0;
  while (len + 1 < size) {
    ssize_t n = read(fd, buf + len, size - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += (size_t)n;
  }
  close(fd);
  buf[len] = 0;
  return (ssize_t)len;
}

/* Adds the numbers of a children file to out (*count of them so far); -1 when it cannot be opened. A file longer
   than the buffer is read in pieces, and a number is cut only at its end. */
static int add_children(const char *path, pid_t *out, int capacity, int *count) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[4096];
  long value = -1;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; i++) {
      char c = buf[i];
      if (c >= '0' && c <= '9') {
        value = (value < 0 ? 0 : value * 10) + (c - '0');
      } else if (value >= 0) {
        if (*count < capacity) out[*count] = (pid_t)value;
        (*count)++;
        value = -1;
      }
    }
  }
  if (value >= 0) {
    if (*count < capacity) out[*count] = (pid_t)value;
    (*count)++;
  }
  close(fd);
  return 0;
}

int toolhost_children_of(pid_t pid, pid_t *out, int capacity) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  if (!d) return -1;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%d/task/%.16s/children", (int)pid, e->d_name);
    (void)add_children(path, out, capacity, &count);
  }
  closedir(d);
  return count;
}

int toolhost_adoptive_children(pid_t *out, int capacity) {
  pid_t self = getpid();
  char stat[512];
  ssize_t len = read_small("/proc/self/stat", stat, sizeof stat);
  char *close_paren = len > 0 ? strrchr(stat, ')') : NULL;
  char state = close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
  if (state == 0 || state == 'Z' || state == 'X') return toolhost_children_of(self, out, capacity);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)self, (int)self);
  int count = 0;
  if (add_children(path, out, capacity, &count) < 0) return toolhost_children_of(self, out, capacity);
  return count;
}

long long toolhost_read_key_value(const char *path, const char *key) {
  char buf[4096];
  if (read_small(path, buf, sizeof buf) < 0) return -1;
  size_t klen = strlen(key);
  for (char *line = buf; *line;) {
    if (strncmp(line, key, klen) == 0 && line[klen] == ' ') return strtoll(line + klen + 1, NULL, 10);
    char *end = strchr(line, '\n');
    if (!end) break;
    line = end + 1;
  }
  return 0;
}
