#define _GNU_SOURCE
#include "CBenchBaseline.h"
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

double toolhost_bench_posix_spawn_loop(const char *path, const char *input, size_t input_len, int n) {
  double t0 = monotonic();
  char buf[65536];
  for (int i = 0; i < n; i++) {
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    char *argv[] = {(char *)path, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (rc != 0) return -1;
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
