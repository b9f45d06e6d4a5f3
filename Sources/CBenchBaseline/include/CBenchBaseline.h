#ifndef TOOLHOST_BENCH_BASELINE_H
#define TOOLHOST_BENCH_BASELINE_H
#include <stddef.h>

/// The C floor for the runner benchmark: n sequential calls of `path`, each with stdin, stdout and stderr on pipes
/// made by posix_spawn, `input` written then stdin closed, stdout read to EOF, the child reaped.
/// Returns the total seconds, or -1 on failure.
double toolhost_bench_posix_spawn_loop(const char *path, const char *input, size_t input_len, int n);

/// The runner's design in C, without containment: the same n calls, each spawned by the calling thread and handed to
/// one I/O thread, which writes the input, polls stdout, stderr and a pidfd until all are done, reaps the child and
/// wakes the caller (a condition variable). What the hand-off to an I/O thread and back costs on this machine,
/// apart from anything toolhost does. Returns the total seconds, or -1 on failure.
double toolhost_bench_handoff_loop(const char *path, const char *input, size_t input_len, int n);
#endif
