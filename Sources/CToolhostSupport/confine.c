#define _GNU_SOURCE
#include "CToolhostSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#endif

/* Landlock's kernel interface, written out here: Debian 12's headers (Linux 6.1) lack the network and scope parts,
   and the interface is stable, versioned by its ABI number. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;
};

/* Every file-system right the kernel of this ABI knows: ABI 1 has 13, 2 adds REFER, 3 TRUNCATE, 5 IOCTL_DEV. */
static uint64_t fs_rights(int abi) {
  uint64_t all = (1ULL << 13) - 1;
  if (abi >= 2) all |= LL_FS_REFER;
  if (abi >= 3) all |= LL_FS_TRUNCATE;
  if (abi >= 5) all |= LL_FS_IOCTL_DEV;
  return all;
}

/* The rights a rule on a file (not a folder) may carry. */
static uint64_t file_rights(int abi) {
  return fs_rights(abi) & (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV);
}

int toolhost_landlock_abi(void) {
#if defined(__linux__)
  return (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
#else
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_landlock_ruleset(int abi, int handle_tcp, int scope) {
#if defined(__linux__)
  struct ll_ruleset_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.handled_access_fs = fs_rights(abi);
  size_t size = offsetof(struct ll_ruleset_attr, handled_access_net);
  if (handle_tcp) {
    if (abi < 4) {
      errno = EOPNOTSUPP;
      return -1;
    }
    attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
  }
  if (abi >= 4) size = offsetof(struct ll_ruleset_attr, scoped);
  if (scope && abi >= 6) {
    attr.scoped = LL_SCOPE_SIGNAL | (scope > 1 ? LL_SCOPE_ABSTRACT_UNIX_SOCKET : 0);
    size = sizeof attr;
  }
  return (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
#else
  (void)abi;
  (void)handle_tcp;
  (void)scope;
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_landlock_allow_path(int ruleset, int abi, const char *path, int write) {
#if defined(__linux__)
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat info;
  if (fstat(fd, &info) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  uint64_t rights = write ? fs_rights(abi) : (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR);
  /* Device files (/dev/null and the like) may also be written and their ioctls used: they hold nothing. */
  if (S_ISCHR(info.st_mode)) rights |= LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV;
  if (!S_ISDIR(info.st_mode)) rights &= file_rights(abi);
  struct ll_path_beneath_attr rule = {rights, fd};
  int r = (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
  int e = errno;
  close(fd);
  errno = e;
  return r;
#else
  (void)ruleset;
  (void)abi;
  (void)path;
  (void)write;
  errno = ENOSYS;
  return -1;
#endif
}

int toolhost_landlock_allow_tcp_port(int ruleset, unsigned port) {
#if defined(__linux__)
  struct ll_net_port_attr rule = {LL_NET_CONNECT_TCP, port};
  return (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &rule, 0);
#else
  (void)ruleset;
  (void)port;
  errno = ENOSYS;
  return -1;
#endif
}

#if defined(__linux__)
#if defined(__x86_64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#endif

int toolhost_socket_filter_supported(void) {
#if defined(__linux__) && defined(THIS_AUDIT_ARCH)
  /* SECCOMP_GET_ACTION_AVAIL answers whether the kernel has filters (3.17+), changing nothing. */
  unsigned action = SECCOMP_RET_ERRNO;
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 ? 1 : 0;
#else
  return 0;
#endif
}

int toolhost_install_socket_filter(int internet) {
#if defined(__linux__) && defined(THIS_AUDIT_ARCH)
  /* socket(2) fails with EACCES for every family (with `internet`, for every family but AF_INET and AF_INET6); so
     does io_uring_setup(2), whose rings could open sockets without the call. socketpair(2), pipes and descriptors
     the process already has keep working. A process of another architecture (a 32-bit program, with socketcall(2))
     is killed; on x86-64 the x32 numbers fail with EPERM. */
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_AUDIT_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 5, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* socket(): the family is the low half of the first argument (little-endian). */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, internet ? AF_INET : 0xFFFFFFFFU, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, internet ? AF_INET6 : 0xFFFFFFFFU, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
#else
  errno = ENOSYS;
  return -1;
#endif
}
