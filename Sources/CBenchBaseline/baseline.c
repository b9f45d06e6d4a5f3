#define _GNU_SOURCE
#include "CBenchBaseline.h"
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Starts `path` with stdin, stdout and stderr on new pipes (posix_spawn); the child's ends are closed here, the
   parent's are in[1], out[0] and err[0]. 0, or -1 with nothing left open. */
static int spawn_on_pipes(const char *path, pid_t *pid, int in[2], int out[2], int err[2]) {
  if (pipe2(in, O_CLOEXEC)) return -1;
  if (pipe2(out, O_CLOEXEC)) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  if (pipe2(err, O_CLOEXEC)) {
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  char *argv[] = {(char *)path, NULL};
  int rc = posix_spawn(pid, path, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    return -1;
  }
  return 0;
}

double toolhost_bench_posix_spawn_loop(const char *path, const char *input, size_t input_len, int n) {
  double t0 = monotonic();
  char buf[65536];
  for (int i = 0; i < n; i++) {
    int in[2], out[2], err[2];
    pid_t pid;
    if (spawn_on_pipes(path, &pid, in, out, err) != 0) return -1;
    size_t off = 0;
    while (off < input_len) {
      ssize_t w = write(in[1], input + off, input_len - off);
      if (w <= 0) break;
      off += (size_t)w;
    }
    close(in[1]);
    while (read(out[0], buf, sizeof buf) > 0) {}
    while (read(err[0], buf, sizeof buf) > 0) {}
    close(out[0]);
    close(err[0]);
    int status;
    waitpid(pid, &status, 0);
  }
  return monotonic() - t0;
}

/* One call handed to the I/O thread: the child, its pipes (the parent's ends) and its pidfd. The caller fills it in
   before writing to `wake` and the I/O thread reads it after reading from it, so the pipe orders the two; `done` is
   under the lock. */
struct handoff_job {
  pid_t pid;
  int pidfd, in, out, err;
  const char *input;
  size_t input_len;
  int done, quit;
  pthread_mutex_t lock;
  pthread_cond_t finished;
  int wake[2];
};

static void *handoff_io(void *arg) {
  struct handoff_job *j = arg;
  char buf[65536];
  for (;;) {
    char byte;
    if (read(j->wake[0], &byte, 1) != 1 || j->quit) return NULL;
    size_t off = 0;
    int exited = 0;
    while (j->in >= 0 || j->out >= 0 || j->err >= 0 || !exited) {
      struct pollfd p[4];
      int n = 0, pi = -1, po = -1, pe = -1, px = -1;
      if (j->in >= 0) { p[n] = (struct pollfd){j->in, POLLOUT, 0}; pi = n++; }
      if (j->out >= 0) { p[n] = (struct pollfd){j->out, POLLIN, 0}; po = n++; }
      if (j->err >= 0) { p[n] = (struct pollfd){j->err, POLLIN, 0}; pe = n++; }
      if (!exited) { p[n] = (struct pollfd){j->pidfd, POLLIN, 0}; px = n++; }
      if (poll(p, (nfds_t)n, -1) < 0) continue;
      if (pi >= 0 && p[pi].revents) {
        ssize_t w = write(j->in, j->input + off, j->input_len - off);
        if (w > 0) off += (size_t)w;
        if (w <= 0 || off == j->input_len) { close(j->in); j->in = -1; }
      }
      if (po >= 0 && p[po].revents && read(j->out, buf, sizeof buf) <= 0) { close(j->out); j->out = -1; }
      if (pe >= 0 && p[pe].revents && read(j->err, buf, sizeof buf) <= 0) { close(j->err); j->err = -1; }
      if (px >= 0 && p[px].revents) {
        int status;
        waitpid(j->pid, &status, 0);
        close(j->pidfd);
        exited = 1;
      }
    }
    pthread_mutex_lock(&j->lock);
    j->done = 1;
    pthread_cond_signal(&j->finished);
    pthread_mutex_unlock(&j->lock);
  }
}

double toolhost_bench_handoff_loop(const char *path, const char *input, size_t input_len, int n) {
  struct handoff_job j = {.input = input, .input_len = input_len};
  pthread_mutex_init(&j.lock, NULL);
  pthread_cond_init(&j.finished, NULL);
  if (pipe2(j.wake, O_CLOEXEC)) return -1;
  pthread_t io;
  if (pthread_create(&io, NULL, handoff_io, &j)) return -1;
  double t0 = monotonic(), result = 0;
  for (int i = 0; i < n; i++) {
    int in[2], out[2], err[2];
    if (spawn_on_pipes(path, &j.pid, in, out, err) != 0) { result = -1; break; }
    j.pidfd = (int)syscall(SYS_pidfd_open, j.pid, 0);
    j.in = in[1];
    j.out = out[0];
    j.err = err[0];
    for (int k = 0; k < 3; k++) {
      int fd = k == 0 ? j.in : k == 1 ? j.out : j.err;
      fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    j.done = 0;
    if (write(j.wake[1], "c", 1) != 1) { result = -1; break; }
    pthread_mutex_lock(&j.lock);
    while (!j.done) pthread_cond_wait(&j.finished, &j.lock);
    pthread_mutex_unlock(&j.lock);
  }
  if (result == 0) result = monotonic() - t0;
  j.quit = 1;
  if (write(j.wake[1], "q", 1) == 1) pthread_join(io, NULL);
  close(j.wake[0]);
  close(j.wake[1]);
  return result;
}
