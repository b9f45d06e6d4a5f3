#ifndef TOOLHOST_BENCH_BASELINE_H
#define TOOLHOST_BENCH_BASELINE_H
#include <stddef.h>

/// The C floor for the runner benchmark: n sequential calls of `path`, each with stdin, stdout and stderr on pipes
/// made by posix_spawn, `input` written then stdin closed, stdout read to EOF, the child reaped.
/// Returns the total seconds, or -1 on failure.
double toolhost_bench_posix_spawn_loop(const char *path, const char *input, size_t input_len, int n);
#endif
