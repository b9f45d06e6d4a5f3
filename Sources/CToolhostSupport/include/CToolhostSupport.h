#ifndef TOOLHOST_SUPPORT_H
#define TOOLHOST_SUPPORT_H
#include <sys/types.h>
#include <signal.h>

/// pidfd_open(2): a descriptor that becomes readable when `pid` exits. -1 with errno where unsupported.
int toolhost_pidfd_open(pid_t pid);

/// Unblocks every signal on the calling thread, saving the old mask in *old. Children inherit the mask of the
/// thread that spawns them; Swift's pool threads block SIGTERM, SIGINT, SIGCHLD..., which would make plugins
/// immune to SIGTERM.
int toolhost_unblock_all_signals(sigset_t *old);
/// Restores a mask saved by toolhost_unblock_all_signals.
int toolhost_restore_signals(const sigset_t *old);
/// Blocks SIGPIPE on the calling thread, so a write to a closed pipe fails with EPIPE instead of killing the host.
int toolhost_block_sigpipe_on_this_thread(void);
/// Creates a pipe whose both ends are close-on-exec.
int toolhost_pipe_cloexec(int fds[2]);
/// Sets O_NONBLOCK on a descriptor.
int toolhost_set_nonblocking(int fd);
/// The number of open descriptors of this process (counts /proc/self/fd or /dev/fd entries), -1 on failure.
int toolhost_count_open_fds(void);

#endif
